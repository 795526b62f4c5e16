"""What: a function is handed a padding (attention) mask and calls a torch attention layer with no mask, or pools over the sequence without ever reading the mask.
Why: The pad positions are attended to (or averaged in) like real tokens: a sequence's encoding changes with how
long the others in its batch are, and nothing fails or warns.
Fix: pass the mask on (src_key_padding_mask= / key_padding_mask= / attn_mask=) and pool over the real tokens only.
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _kw
from torch_pitfalls.lint.walking import kept_on, walk

# a parameter that carries where the padding is
_MASK = re.compile(r"(^|_)masks?$")
_PADDING = re.compile(
    r"^(attention|attn|padding|pad|key_padding|src_key_padding|input|src|tgt|seq|token|text)_?masks?$"
    r"|^((x|src|seq|input|text|token|audio|feat|feats)_)?(lengths|lens)$"
)
# torch attention layers, with how many positional arguments they take before their first mask
_LAYERS = {
    "MultiheadAttention": 3,
    "TransformerEncoder": 1,
    "TransformerEncoderLayer": 1,
    "TransformerDecoder": 2,
    "TransformerDecoderLayer": 2,
    "Transformer": 2,
}
_SDPA = ("torch.nn.functional.scaled_dot_product_attention",)
_POOLS = ("mean", "sum", "max", "amax", "logsumexp", "nanmean")


def _params(fn) -> list[str]:
    a = fn.args
    return [x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)]


def _root(expr):
    """The name a chain of methods, attributes, indexes and comparisons starts from:
    ``attention_mask.unsqueeze(-1).float()`` -> ``attention_mask``; ``~mask`` -> ``mask``."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value
        elif isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif isinstance(expr, ast.UnaryOp):
            expr = expr.operand
        elif isinstance(expr, ast.Compare):
            expr = expr.left
        else:
            return expr.id if isinstance(expr, ast.Name) else None


def _mask_names(fn, params) -> set[str]:
    """The mask parameters and the names made from them (``m = mask.unsqueeze(-1).float()``)."""
    names = set(params)
    for n in sorted((n for n in walk(fn) if isinstance(n, ast.Assign)), key=lambda n: n.lineno):
        if _root(n.value) in names:
            names.update(t.id for t in n.targets if isinstance(t, ast.Name))
    return names


def _reads(expr, names) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(expr))


def _handed_on(fn, names) -> bool:
    """The mask (or a name made from it) is given to some call: as an argument (``layer(x, mask)``),
    or any argument is given as a mask keyword (``attn_mask=...``)."""
    for n in walk(fn):
        if not isinstance(n, ast.Call):
            continue
        if any(k.arg is None or "mask" in k.arg for k in n.keywords):
            return True
        if any(_root(a.value if isinstance(a, ast.Starred) else a) in names for a in n.args):
            return True
        if any(_root(k.value) in names for k in n.keywords):
            return True
    return False


def _attention_without_mask(call, ctx) -> bool:
    """A call of a torch attention layer (a module the bindings prove to be one, or
    F.scaled_dot_product_attention) given no mask at all."""
    if any(k.arg is None or "mask" in k.arg or k.arg == "is_causal" for k in call.keywords):
        return False
    if any(isinstance(a, ast.Starred) for a in call.args):
        return False
    if ctx.qualified(call.func) in _SDPA:
        return len(call.args) <= 3
    before = _LAYERS.get(_attention_layer(call, ctx))
    return before is not None and len(call.args) <= before


def _attention_layer(call, ctx) -> str | None:
    """The torch attention layer a call runs (``"TransformerEncoder"``), where the bindings prove the
    module called is one; else None."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)) or ctx.qualified(call.func) is not None:
        return None
    held = ctx.held(call.func)
    what = (held.what or "") if held is not None and held.kind == "module" else ""
    name = what.rsplit(".", 1)[-1]
    return name if what.startswith("torch.nn.") and name in _LAYERS else None


def _dim(call):
    value = _kw(call, "dim")
    if value is None and call.args:
        value = call.args[0] if isinstance(call.func, ast.Attribute) else (call.args[1] if len(call.args) > 1 else None)
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub) and isinstance(value.operand, ast.Constant):
        return -value.operand.value
    return value.value if isinstance(value, ast.Constant) else None


def _pools_over_sequence(call, ctx):
    """``h.mean(dim=1)`` / ``torch.sum(h, 1)``: a reduction over the sequence axis of (batch, seq, ...).
    True where it is torch's (``dim=`` is torch's spelling, numpy's is ``axis=``; ``torch.mean``), UNSURE
    for ``h.mean(1)`` on a receiver of unknown type."""
    q = ctx.qualified(call.func)
    if q is not None:
        return q.startswith("torch.") and q.rsplit(".", 1)[-1] in _POOLS and _dim(call) == 1
    if not (isinstance(call.func, ast.Attribute) and call.func.attr in _POOLS and _dim(call) == 1):
        return False
    if _kw(call, "dim") is not None:
        return True
    kind = ctx.kind(call.func.value)
    return kind == "tensor" if kind is not None else UNSURE


def _mask_ignored(node, ctx):
    """A pooling over the sequence in a function that never reads its padding mask (``attention_mask``,
    ``lengths``), or a torch attention layer called without a mask in a function handed one (``mask``,
    ``padding_mask``) that gives it, or anything made from it, to no call."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = _params(fn)
    masks = [p for p in params if _MASK.search(p) or _PADDING.search(p)]
    if not masks or kept_on(fn, "_ptf235_kwargs_passed", _kwargs_passed):
        return False  # **kwargs passed on: the mask may travel in them
    padding = [p for p in masks if _PADDING.search(p)]
    if padding and _method_or_torch(node):
        # pooled with no read of the mask in the function, or over a layer's output the mask reached only
        # as the layer's mask keyword (and nothing masked the values after it)
        masked, hidden_from_attention = _mask_in_pooled_values(node, fn, _mask_names(fn, padding), ctx)
        if not masked and (hidden_from_attention or not any(_reads(s, set(padding)) for s in fn.body)):
            found = _pools_over_sequence(node, ctx)
            if found or found is UNSURE:
                return found
    if not _attention_without_mask(node, ctx):
        return False
    names = _mask_names(fn, masks)
    return not _reads(node, names) and not _handed_on(fn, names)


def _mask_in_pooled_values(call, fn, names, ctx) -> tuple[bool, bool]:
    """(the pooled values are made with the mask, or by a call that may use it: ``h * mask.unsqueeze(-1)``,
    ``h.masked_fill(~m, 0)``, ``pack_padded_sequence(x, lengths)``, ``self.bert(x, attention_mask=m)``;
    the mask reached them only as the ``...mask=`` keyword of a torch attention layer), through the function's
    own assignments. ``nn.TransformerEncoder(x, src_key_padding_mask=m)`` hides the pads from attention but
    still outputs a vector at each pad position, and a mean over the sequence averages them in."""
    assigned = [a for a in walk(fn) if isinstance(a, ast.Assign) and a.lineno < call.lineno]
    todo, seen, hidden = [call.func.value if isinstance(call.func, ast.Attribute) else call], set(), False
    while todo:
        expr = todo.pop()
        for n in walk(expr):
            if isinstance(n, ast.Name) and n.id in names:
                layer = _mask_keyword_of(expr, n)
                if layer is None or _attention_layer(layer, ctx) is None:
                    return True, False
                hidden = True
            elif isinstance(n, ast.Name) and n.id not in seen:
                seen.add(n.id)
                todo += [a.value for a in assigned if _assigns(a, n.id)]
    return False, hidden


def _assigns(assign, name) -> bool:
    """``name = ...`` or ``name, _ = ...``."""
    return any(isinstance(t, ast.Name) and t.id == name for target in assign.targets for t in walk(target))


def _mask_keyword_of(expr, name):
    """The call in ``expr`` whose ``...mask=`` keyword holds ``name``, or None."""
    for n in walk(expr):
        if isinstance(n, ast.Call):
            for k in n.keywords:
                if k.arg and "mask" in k.arg and any(m is name for m in walk(k.value)):
                    return n
    return None


def _method_or_torch(call) -> bool:
    return isinstance(call.func, ast.Attribute) and call.func.attr in _POOLS


def _kwargs_passed(fn) -> bool:
    return fn.args.kwarg is not None and any(
        isinstance(n, ast.Call) and any(k.arg is None for k in n.keywords) for n in walk(fn)
    )


RULE = Rule(
    "PTF235",
    ("attention-mask-ignored",),
    "this function is handed a padding mask but attends (or pools) over every position without it: pad tokens "
    "are attended to like real ones, so a sequence's result depends on the padding of its batch; pass the mask "
    "(src_key_padding_mask= / key_padding_mask= / attn_mask=) or pool over the real tokens only",
    _mask_ignored,
    nodes=CALL,
    needs=("mask", "length"),
)
