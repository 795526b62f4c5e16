"""What: an nn.LSTM / GRU / RNN built without batch_first=True is used batch-first: its output indexed out[:, -1], or its input a (batch, seq, ...) tensor from a DataLoader batch or pad_sequence(batch_first=True).
Why: Without batch_first the layer reads (seq, batch, feature): the recurrence runs across the batch, each sample's
result is computed from other samples' data, and the shapes still line up, so nothing fails.
Fix: nn.LSTM(..., batch_first=True) for (batch, seq, feature) data (or transpose the input to (seq, batch, ...)).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _kw
from torch_pitfalls.lint.rules.shared.flow import _values
from torch_pitfalls.lint.rules.shared.modules import constructions
from torch_pitfalls.lint.walking import kept_on, walk

_RNNS = ("torch.nn.LSTM", "torch.nn.GRU", "torch.nn.RNN")
# layers and ops that keep a tensor's leading axes where they are (they act on the last one, or elementwise)
_KEEPS_LAYOUT = frozenset(
    """Embedding Dropout Dropout1d Linear LayerNorm ReLU GELU Tanh Sigmoid SiLU LeakyReLU ELU Identity""".split()
)
_KEEPS_METHODS = frozenset("to cuda cpu float half double long int bfloat16 contiguous detach clone".split())
_KEEPS_FUNCTIONS = frozenset(
    """torch.nn.functional.dropout torch.nn.functional.relu torch.nn.functional.gelu torch.tanh torch.relu
torch.nn.functional.embedding""".split()
)
# what moves or packs the axes: the layout is then the code's own decision
_RELAYOUT = frozenset(
    "transpose permute t T mT view reshape unsqueeze squeeze flatten unflatten swapaxes movedim".split()
)
_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
_PAD = ("torch.nn.utils.rnn.pad_sequence",)
BATCH, SEQ = "batch", "seq"


# --- which layer, and whether it is batch-first ------------------------------------------------------
def _constructors(expr, chain, line, klass, ctx) -> list | None:
    """(the nn.LSTM/GRU/RNN call, its scopes) for every place ``expr`` may have been built (shared/modules.py
    follows the names); None where one cannot be told or is something else."""
    found = constructions(expr, chain, line, klass, ctx)
    if found is None or any(ctx.qualified(call.func) not in _RNNS for call, _ in found):
        return None
    return found


def _batch_first(ctor, chain, ctx) -> bool | None:
    """The layer's batch_first: True, False, or None where it cannot be told (a flag no call of the module
    decides, ``**kwargs``)."""
    value = _kw(ctor, "batch_first")
    if value is None:
        if any(k.arg is None for k in ctor.keywords) or any(isinstance(a, ast.Starred) for a in ctor.args):
            return None
        value = ctor.args[4] if len(ctor.args) > 4 else ast.Constant(False)
    if isinstance(value, ast.Constant):
        return bool(value.value)
    if isinstance(value, ast.Name):
        values = _values(value.id, chain, ctor.lineno, ctx.bindings)
        if values and all(isinstance(v, ast.Constant) for v in values):
            found = {bool(v.value) for v in values}
            return found.pop() if len(found) == 1 else None
    return None


def _seq_first_layer(call, ctx) -> bool:
    """The call calls an nn.LSTM / GRU / RNN that every place it is built leaves batch_first=False."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)):
        return False
    held = ctx.held(call.func)
    if held is None or held.kind != "module" or held.what not in _RNNS:
        return False
    ctors = _constructors(call.func, ctx.chain(), call.lineno, ctx.klass, ctx)
    return bool(ctors) and all(_batch_first(c, chain, ctx) is False for c, chain in ctors)


# --- the output indexed batch-first -------------------------------------------------------------------
def _full_slice(node) -> bool:
    return isinstance(node, ast.Slice) and node.lower is None and node.upper is None and node.step is None


def _last(node) -> bool:
    return isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and getattr(node.operand, "value", None) == 1


def _batch_first_index(sub) -> bool:
    """``out[:, -1]`` / ``out[:, -1, :]``: the last step of every sequence, read batch-first (on a
    (seq, batch, hidden) output it is the last sample of the batch at every step)."""
    index = sub.slice
    return (
        isinstance(index, ast.Tuple)
        and len(index.elts) >= 2
        and _full_slice(index.elts[0])
        and _last(index.elts[1])
        and all(_full_slice(e) for e in index.elts[2:])
    )


def _output_names(call, ctx) -> tuple[set, ast.AST | None]:
    """The names the call's output (element 0) is bound to, and the statement that binds them."""
    up = ctx.parent(call)
    target = None
    if isinstance(up, ast.Subscript) and getattr(up.slice, "value", None) == 0:  # rnn(x)[0]
        if _batch_first_index_of(ctx.parent(up), up):
            return {"<direct>"}, up
        stmt = ctx.parent(up)
        if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            target = stmt, stmt.targets[0].id
    elif isinstance(up, ast.Assign) and len(up.targets) == 1:
        t = up.targets[0]
        if isinstance(t, (ast.Tuple, ast.List)) and t.elts and isinstance(t.elts[0], ast.Name):
            target = up, t.elts[0].id
    if target is None:
        return set(), None
    return {target[1]}, target[0]


def _batch_first_index_of(node, inner) -> bool:
    return isinstance(node, ast.Subscript) and node.value is inner and _batch_first_index(node)


def _output_read_batch_first(call, ctx) -> bool:
    names, stmt = _output_names(call, ctx)
    if "<direct>" in names:
        return True
    if not names:
        return False
    (name,) = names
    for n in walk(ctx.function):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and n.value.id == name
            and n.lineno > stmt.lineno
            and _batch_first_index(n)
        ):
            binding, _ = ctx.bindings.lookup(name, ctx.chain(), n.lineno)
            if binding is not None and binding.line == stmt.lineno:
                return True
    return False


# --- the input's layout --------------------------------------------------------------------------------
def _layout(expr, chain, line, klass, ctx, depth=0) -> str | None:
    """BATCH where ``expr`` is laid out (batch, seq, ...): a DataLoader's batch (default collate stacks on
    dim 0, or a collate that pads batch_first), ``pad_sequence(..., batch_first=True)``, through layers that
    keep the axes (Embedding, Dropout, Linear) and a module's forward argument; SEQ where the code lays it
    out itself (a transpose, a view, pad_sequence without batch_first); None where it cannot be told."""
    if depth > 10 or expr is None:
        return None
    if isinstance(expr, ast.Call):
        return _call_layout(expr, chain, line, klass, ctx, depth)
    if isinstance(expr, ast.BinOp):  # emb + pos: the layout of its tensor operands, where they agree
        found = {_layout(s, chain, line, klass, ctx, depth + 1) for s in (expr.left, expr.right)} - {None}
        return found.pop() if len(found) == 1 else None
    if isinstance(expr, ast.Attribute) and expr.attr in ("T", "mT"):
        return SEQ
    if not isinstance(expr, ast.Name):
        return None
    binding, where = ctx.bindings.lookup(expr.id, chain, line)
    if binding is None:
        return None
    if binding.how == "assign":
        return _layout(binding.value, where, binding.line, klass, ctx, depth + 1)
    if binding.how == "iter":
        return _loader_layout(binding.value, where, binding.line, ctx)
    if binding.how == "param":
        return _argument_layout(where[0], expr.id, ctx, depth)
    return None


def _call_layout(expr, chain, line, klass, ctx, depth) -> str | None:
    """The layout a call gives: pad_sequence's, or its input's through a layer or op that keeps the axes."""
    q = ctx.qualified(expr.func) or ""
    if q in _PAD:
        flag = _kw(expr, "batch_first")
        if flag is None or isinstance(flag, ast.Constant):
            return BATCH if flag is not None and flag.value is True else SEQ
        return None
    if q.startswith("torch.nn.utils.rnn."):
        return None  # a packed sequence: no layout
    if q in _KEEPS_FUNCTIONS and expr.args:
        return _layout(expr.args[0], chain, line, klass, ctx, depth + 1)
    if isinstance(expr.func, ast.Attribute) and q == "":
        if expr.func.attr in _RELAYOUT:
            return SEQ
        if expr.func.attr in _KEEPS_METHODS:
            return _layout(expr.func.value, chain, line, klass, ctx, depth + 1)
    if isinstance(expr.func, (ast.Name, ast.Attribute)) and expr.args and not q:
        held = ctx.bindings.held(expr.func, chain, line, klass)
        what = (held.what or "") if held is not None and held.kind == "module" else ""
        if what.startswith("torch.nn.") and what.rsplit(".", 1)[-1] in _KEEPS_LAYOUT:
            return _layout(expr.args[0], chain, line, klass, ctx, depth + 1)
        if what == "torch.nn.Sequential" and _sequential_keeps_layout(expr.func, chain, line, klass, ctx):
            return _layout(expr.args[0], chain, line, klass, ctx, depth + 1)
    return None


def _sequential_keeps_layout(expr, chain, line, klass, ctx) -> bool:
    """An nn.Sequential built, everywhere it is built, of layers that keep the axes
    (``nn.Sequential(nn.Linear(n, d), nn.ReLU())``): its output is laid out as its input."""
    found = constructions(expr, chain, line, klass, ctx)
    return bool(found) and all(
        ctx.qualified(call.func) == "torch.nn.Sequential"
        and call.args
        and not call.keywords
        and all(
            isinstance(layer, ast.Call)
            and (ctx.qualified(layer.func) or "").startswith("torch.nn.")
            and (ctx.qualified(layer.func) or "").rsplit(".", 1)[-1] in _KEEPS_LAYOUT
            for layer in call.args
        )
        for call, _ in found
    )


def _loader_layout(iterable, chain, line, ctx) -> str | None:
    """What a DataLoader built in this module yields: BATCH for the default collate (it stacks samples
    on a new dim 0) or a collate function of this module that pads batch_first; SEQ for one that pads
    with pad_sequence's default (seq, batch)."""
    if isinstance(iterable, ast.Call) and iterable.args and getattr(iterable.func, "id", None) in ("enumerate", "iter"):
        iterable = iterable.args[0]
    if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", None) == "tqdm" and iterable.args:
        iterable = iterable.args[0]
    loader = ctx.bindings.value_of(iterable.id, chain, line) if isinstance(iterable, ast.Name) else iterable
    if not (isinstance(loader, ast.Call) and ctx.qualified(loader.func) in _LOADERS):
        return None
    size = loader.args[1] if len(loader.args) > 1 else _kw(loader, "batch_size")
    if any(k.arg is None for k in loader.keywords) or (isinstance(size, ast.Constant) and size.value is None):
        return None  # no batching (batch_size=None: samples as they are), or arguments not seen
    collate = _kw(loader, "collate_fn")
    if collate is None:
        return BATCH  # default_collate stacks the samples on a new dim 0
    fn = ctx.bindings.module_function(collate.id) if isinstance(collate, ast.Name) else None
    if fn is None:
        return None
    pads = [n for n in walk(fn) if isinstance(n, ast.Call) and ctx.qualified(n.func) in _PAD]
    if pads:
        flags = {isinstance(_kw(p, "batch_first"), ast.Constant) and _kw(p, "batch_first").value is True for p in pads}
        return BATCH if flags == {True} else SEQ
    return None


def _argument_layout(fn, param, ctx, depth) -> str | None:
    """A parameter's layout from what is passed for it: for a module's ``forward``, the calls of the
    module's instances in this file (``model(tokens)``); for a function, its calls."""
    bindings = ctx.bindings
    klass = next((k for k in bindings.classes().values() if fn in k.body), None)
    if klass is not None and fn.name == "forward":
        positional = [a.arg for a in fn.args.args][1:]
        if param not in positional:
            return None
        index = positional.index(param)
        found = set()
        for call, chain, caller_klass in _instance_calls(klass, ctx):
            value = call.args[index] if len(call.args) > index else _kw(call, param)
            if value is None or any(isinstance(a, ast.Starred) for a in call.args):
                continue
            found.add(_layout(value, chain, call.lineno, caller_klass, ctx, depth + 1))
        return BATCH if found == {BATCH} or found == {BATCH, None} else None
    sites = bindings.passed(fn, param)
    if not sites:
        return None
    found = {_layout(v, c, at, k, ctx, depth + 1) for v, c, at, k in sites}
    return BATCH if BATCH in found and SEQ not in found else None


def _instance_calls(klass, ctx) -> list:
    """The calls in this module of a name that holds an instance of ``klass`` (``model(x)``)."""

    def find(tree):
        bindings = ctx.bindings
        bindings.call_sites("")  # built once for the module
        out = []
        for sites in bindings._calls.values():
            for call, chain, caller_klass in sites:
                held = bindings.held(call.func, chain, call.lineno, caller_klass)
                if held is not None and held.kind == "module" and held.what:
                    out.append((held.what, call, chain, caller_klass))
        return out

    return [(c, ch, k) for what, c, ch, k in kept_on(ctx.module, "_ptf233_instance_calls", find) if what == klass.name]


def _input_batch_first(call, ctx) -> bool:
    if not call.args:
        return False
    return _layout(call.args[0], ctx.chain(), call.lineno, ctx.klass, ctx) == BATCH


def _batch_first_mismatch(node, ctx) -> bool:
    """A call of an nn.LSTM / GRU / RNN left batch_first=False whose output is read batch-first
    (``out[:, -1]``) or whose input is laid out (batch, seq, ...)."""
    if not (isinstance(node, ast.Call) and node.args):
        return False
    if not _seq_first_layer(node, ctx):
        return False
    return _output_read_batch_first(node, ctx) or _input_batch_first(node, ctx)


RULE = Rule(
    "PTF233",
    ("rnn-batch-first-mismatch",),
    "this LSTM/GRU/RNN is built without batch_first=True (it reads (seq, batch, feature)) but is used "
    "batch-first: the recurrence runs across the batch and mixes samples, with every shape still right; "
    "build it with batch_first=True (or transpose its input to (seq, batch, ...))",
    _batch_first_mismatch,
    nodes=CALL,
    needs=("LSTM", "GRU", "RNN"),
)
