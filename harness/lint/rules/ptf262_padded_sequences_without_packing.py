"""What: a padded batch (pad_sequence, an Embedding with padding_idx) run through an nn.RNN/LSTM/GRU
without packing, and its final state h_n (or out[:, -1]) used as each sequence's encoding.
Why: The RNN runs over a short sequence's padding too, so its final state comes after the longest one's
last step: a sequence's encoding changes with the lengths of the others in its batch.
Fix: pack_padded_sequence(x, lengths, batch_first=..., enforce_sorted=False) first, or gather out[range(B), lengths - 1].
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _kw
from torch_pitfalls.lint.rules.shared.batches import collated_element
from torch_pitfalls.lint.rules.shared.flow import context_at
from torch_pitfalls.lint.rules.shared.modules import forward_arguments
from torch_pitfalls.lint.testcode import in_test_code
from torch_pitfalls.lint.walking import kept_on, walk

_RNNS = ("RNN", "LSTM", "GRU")
_PAD = ("torch.nn.utils.rnn.pad_sequence",)
_KEEP_METHODS = frozenset("to cuda cpu float double half contiguous detach".split())
# per-step layers and activations: a padded step stays a padded step, in its place
_KEEP_MODULES = frozenset("Dropout Dropout1d AlphaDropout LayerNorm Identity Linear ReLU GELU Tanh SiLU ELU".split())
_KEEP_FUNCTIONS = frozenset("dropout alpha_dropout layer_norm relu gelu tanh silu elu leaky_relu".split())


def _rnn_module(func, ctx) -> bool:
    """A torch.nn RNN, LSTM or GRU: built so, or a parameter annotated so (``cell: nn.GRU``)."""
    held = ctx.held(func)
    what = (held.what or "") if held is not None and held.kind == "module" else ""
    if not what and isinstance(func, ast.Name):
        binding, _ = ctx.bindings.lookup(func.id, ctx.chain(), func.lineno)
        if binding is not None and binding.how == "param" and binding.value is not None:
            what = ctx.qualified(binding.value) or ""
    return what.startswith("torch.nn.") and what.rsplit(".", 1)[-1] in _RNNS


def _constructor(func, ctx):
    """The call that built the module (``self.rnn = nn.GRU(...)`` or a local name)."""
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(func.attr) or []
        return assigned[0][1] if len(assigned) == 1 and isinstance(assigned[0][1], ast.Call) else None
    if isinstance(func, ast.Name):
        value = ctx.value_of(func, func.lineno)
        while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "to":
            value = value.func.value
        return value if isinstance(value, ast.Call) else None
    return None


def _padded(expr, ctx, line: int, depth: int = 0) -> str | None:
    """Where the RNN's input shows padding: "pad_sequence" (padded to the longest, right after it),
    "embedding" (token ids looked up by an Embedding with a padding_idx), or None (packed, or not
    known to be padded). Per-step layers and activations keep the padded steps where they are."""
    if depth > 8:
        return None
    if isinstance(expr, ast.Name):
        return _padded_name(expr, ctx, line, depth)
    if not isinstance(expr, ast.Call):
        return None
    func = expr.func
    q = ctx.qualified(func)
    if q in _PAD:
        side = _kw(expr, "padding_side")
        return None if side is not None and not _const(side, "right") else "pad_sequence"
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        if q.startswith(("torch.nn.functional.", "torch.")) and last in _KEEP_FUNCTIONS and expr.args:
            return _padded(expr.args[0], ctx, line, depth + 1)
        if q == "torch.nn.functional.embedding":
            pad = _kw(expr, "padding_idx")
            return "embedding" if pad is not None and not _const(pad, None) else None
        return None
    held = ctx.held(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
    if held is not None and held.kind == "module":
        name = (held.what or "").rsplit(".", 1)[-1] if (held.what or "").startswith("torch.nn.") else ""
        if name in _KEEP_MODULES and expr.args:
            return _padded(expr.args[0], ctx, line, depth + 1)
        if name == "Embedding":
            ctor = _constructor(func, ctx)
            pad = _kw(ctor, "padding_idx") if ctor is not None else None
            return "embedding" if pad is not None and not _const(pad, None) else None
        return None
    if isinstance(func, ast.Attribute) and func.attr in _KEEP_METHODS:
        return _padded(func.value, ctx, line, depth + 1)
    return None


def _padded_name(expr: ast.Name, ctx, line: int, depth: int) -> str | None:
    """``_padded`` of a name: what it was assigned; for a parameter, ignored lengths beside it or what every
    call of the model hands its forward; for a loop's element, what the loader's collate function returns."""
    binding, where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
    if binding is not None and binding.how == "param" and where:
        if _lengths_ignored(where[0]):
            return "lengths"
        return _forward_input_padded(expr.id, where[0], ctx, depth)
    if binding is not None and binding.how == "iter":
        value = collated_element(expr.id, ctx.chain(), line, ctx)
        return None if value is None else _padded(value, context_at(value, ctx), value.lineno, depth + 1)
    if binding is None or binding.how != "assign":
        return None
    return _padded(binding.value, ctx, binding.line, depth + 1)


_LENGTHS = re.compile(r"(^|_)(lengths?|lens|seq_lens?|seq_lengths?)$")


def _forward_input_padded(name: str, fn, ctx, depth: int) -> str | None:
    """``forward(self, x)`` of a module class of the file: "pad_sequence" where every call of a model of the
    class hands it a padded batch (``model(x)`` with ``x`` from a loader whose collate pads)."""
    klass = ctx.klass
    if not (isinstance(fn, ast.FunctionDef) and fn.name == "forward" and klass is not None and fn in klass.body):
        return None
    params = [a.arg for a in fn.args.args[1:]]
    if name not in params:
        return None
    calls = forward_arguments(klass, params.index(name), ctx)
    found = {_padded(arg, at, line, depth + 1) for arg, at, line in calls}
    return found.pop() if len(found) == 1 else None


def _lengths_ignored(fn) -> bool:
    """The function is given the sequences' lengths (a parameter named ``lengths``, ``x_lens``...) and
    never reads them: the batch beside them is padded, and nothing packs it."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    names = [a.arg for a in fn.args.args + fn.args.kwonlyargs if _LENGTHS.search(a.arg)]
    read = {n.id for n in walk(fn) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    return any(name not in read for name in names)


def _batch_first(func, ctx) -> bool | None:
    ctor = _constructor(func, ctx)
    if ctor is None:
        return None
    flag = _kw(ctor, "batch_first")
    if flag is None:
        return False if not any(k.arg is None for k in ctor.keywords) else None
    return bool(flag.value) if isinstance(flag, ast.Constant) else None


def _last_step(sub, batch_first) -> bool:
    """``out[:, -1]`` (batch first) or ``out[-1]`` (time first): the output at the last padded step."""
    index = sub.slice
    if isinstance(index, ast.Tuple) and len(index.elts) >= 2:
        whole = index.elts[0]
        return (
            batch_first is not False
            and isinstance(whole, ast.Slice)
            and whole.lower is None
            and whole.upper is None
            and whole.step is None
            and _minus_one(index.elts[1])
        )
    return batch_first is not True and _minus_one(index)


def _minus_one(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and _const(node.operand, 1)


def _uses(node, names, ctx):
    """The loads of ``names`` in the function that read what this call bound."""
    for n in walk(ctx.function):
        if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) and n.lineno >= node.lineno:
            binding, _ = ctx.bindings.lookup(n.id, ctx.chain(), n.lineno)
            if binding is not None and binding.value is node:
                yield n


def _state_or_last_step_used(node, ctx, batch_first) -> bool:
    parent = ctx.parent(node)
    if isinstance(parent, ast.Subscript) and parent.value is node:  # rnn(x)[1], rnn(x)[0][:, -1]
        if _const(parent.slice, 1):
            return True
        up = ctx.parent(parent)
        return _const(parent.slice, 0) and isinstance(up, ast.Subscript) and _last_step(up, batch_first)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is node):
        return False
    target = parent.targets[0]
    if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
        return False
    out, state = target.elts
    states = [e.id for e in (state.elts if isinstance(state, ast.Tuple) else [state]) if isinstance(e, ast.Name)]
    if any(True for _ in _uses(node, [s for s in states if s != "_"], ctx)):
        return True
    if isinstance(out, ast.Name) and out.id != "_":
        for n in _uses(node, [out.id], ctx):
            up = ctx.parent(n)
            if isinstance(up, ast.Subscript) and up.value is n and _last_step(up, batch_first):
                return True
    return False


def _unpacked_padded_rnn(node, ctx) -> bool:
    """A call of a torch.nn RNN/LSTM/GRU on a batch padded by pad_sequence (or looked up by an Embedding
    with a padding_idx, with no initial state passed: a step-by-step decoder passes its state), whose
    final state or last-step output is used."""
    if not (
        isinstance(node, ast.Call) and 1 <= len(node.args) <= 2 and isinstance(node.func, (ast.Name, ast.Attribute))
    ):
        return False
    if ctx.function is ctx.module or not _rnn_module(node.func, ctx) or in_test_code(ctx.path):
        return False
    source = _padded(node.args[0], ctx, node.lineno)
    if source is None or (source == "embedding" and (len(node.args) > 1 or node.keywords or _pads_left(ctx))):
        return False
    return _state_or_last_step_used(node, ctx, _batch_first(node.func, ctx))


def _pads_left(ctx) -> bool:
    """The file asks for its token batches padded on the left (torchtext's ``Field(pad_first=True)``, a
    tokenizer's ``padding_side="left"``): the last step of each row is a real token."""

    def left(node) -> bool:
        if isinstance(node, ast.keyword):
            return (node.arg == "pad_first" and _const(node.value, True)) or (
                node.arg == "padding_side" and _const(node.value, "left")
            )
        return (
            isinstance(node, ast.Assign)
            and _const(node.value, "left")
            and any(isinstance(t, ast.Attribute) and t.attr == "padding_side" for t in node.targets)
        )

    return kept_on(ctx.module, "_ptf262_pads_left", lambda tree: [any(left(n) for n in walk(tree))])[0]


RULE = Rule(
    "PTF262",
    ("padded-sequences-without-packing",),
    "a padded batch goes through the RNN without pack_padded_sequence and its final state (or last-step "
    "output) is used: short sequences are encoded after running over their padding; pack it with "
    "pack_padded_sequence(x, lengths, batch_first=..., enforce_sorted=False)",
    _unpacked_padded_rnn,
    nodes=CALL,
    needs=("GRU", "LSTM", "RNN"),
)
