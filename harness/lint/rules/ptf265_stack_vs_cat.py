"""What: torch.stack of per-batch tensors (a model's outputs, or the batches, of a DataLoader) where torch.cat
was meant.
Why: stack puts the batches on a new axis: (n_batches, B, ...), not (N, ...); statistics over dim 0 run
over batches and still broadcast silently, and a smaller last batch makes stack raise.
Fix: torch.cat(list, dim=0) joins along the batch axis they have; stack makes a batch of single samples.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADER_NAME
from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _is_call_to, _kw
from torch_pitfalls.lint.walking import walk

# what keeps a batch's leading axis: conversions, elementwise ops, a class or score per sample
_KEEP_METHODS = frozenset(
    "cpu detach to float double long int half clone contiguous sigmoid exp round abs softmax log_softmax".split()
)
_KEEP_BY_DIM = frozenset("argmax argmin softmax log_softmax squeeze".split())
_KEEP_FUNCTIONS = ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.exp")
_KEEP_FUNCTIONS_BY_DIM = (
    "torch.softmax",
    "torch.argmax",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
)
_REDUCTIONS = frozenset("mean sum std var median".split())


def _dim_not_zero(call, position: int = 0) -> bool:
    dim = call.args[position] if len(call.args) > position else _kw(call, "dim")
    if dim is None:
        return False
    value = -dim.operand.value if isinstance(dim, ast.UnaryOp) and isinstance(dim.operand, ast.Constant) else None
    value = dim.value if isinstance(dim, ast.Constant) else value
    return isinstance(value, int) and value != 0


_WRAPPERS = ("enumerate", "tqdm", "iter")


def _unwrap_iterable(it):
    while isinstance(it, ast.Call) and it.args and getattr(it.func, "id", getattr(it.func, "attr", None)) in _WRAPPERS:
        it = it.args[0]
    return it


def _loader(it, ctx, line):
    """The DataLoader a loop iterates (through enumerate/tqdm): its constructor call where this file
    builds it, ``True`` for one known only by kind or name, None for anything else."""
    it = _unwrap_iterable(it)
    held = ctx.held(it, line) if isinstance(it, (ast.Name, ast.Attribute)) else None
    if held is not None and held.kind == "loader":
        value = ctx.value_of(it, line) if isinstance(it, ast.Name) else None
        return value if isinstance(value, ast.Call) else True
    if held is None and isinstance(it, (ast.Name, ast.Attribute)):
        name = it.id if isinstance(it, ast.Name) else it.attr
        if LOADER_NAME.search(name):
            return True
    return None


def _batched(loader) -> bool:
    """A loader whose batches hold more than one sample (``batch_size`` 1 or None: single samples,
    where stack is what makes the batch axis)."""
    if loader is True:
        return True
    size = _kw(loader, "batch_size")
    if size is None:
        size = loader.args[1] if len(loader.args) > 1 else None
    if size is None:
        return any(k.arg is None for k in loader.keywords) or _kw(loader, "batch_sampler") is not None
    return not (_const(size, 1) or _const(size, None))


def _keeps_batch(expr, batch_names, ctx, depth: int = 0) -> bool:
    """``expr`` is a tensor with the batch's leading axis, made from the loop's batch variables: the batch
    itself, a part of a dict batch, a module's output on it, and conversions or per-sample ops of those."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Name):
        if expr.id in batch_names:
            return True
        value = ctx.value_of(expr, expr.lineno)
        return value is not None and _keeps_batch(value, batch_names, ctx, depth + 1)
    if isinstance(expr, ast.Subscript):
        key = expr.slice
        full = isinstance(key, ast.Tuple) and key.elts and isinstance(key.elts[0], ast.Slice)
        keyed = isinstance(key, ast.Constant) and isinstance(key.value, str)
        return (full or keyed) and _keeps_batch(expr.value, batch_names, ctx, depth + 1)
    if isinstance(expr, ast.Attribute) and expr.attr in ("logits", "data"):
        return _keeps_batch(expr.value, batch_names, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return _keeps_batch(expr.left, batch_names, ctx, depth + 1) or _keeps_batch(
            expr.right, batch_names, ctx, depth + 1
        )
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func)
    if q in _KEEP_FUNCTIONS or (q in _KEEP_FUNCTIONS_BY_DIM and _dim_not_zero(expr, 1)):
        return bool(expr.args) and _keeps_batch(expr.args[0], batch_names, ctx, depth + 1)
    if q is not None:
        return False
    func = expr.func
    if isinstance(func, ast.Attribute):
        held = ctx.held(func.value)
        if held is not None and held.kind == "module":
            return False
        if func.attr in _KEEP_BY_DIM:
            return _dim_not_zero(expr) and _keeps_batch(func.value, batch_names, ctx, depth + 1)
        if func.attr in _KEEP_METHODS:
            return _keeps_batch(func.value, batch_names, ctx, depth + 1)
    held = ctx.held(func)
    if held is not None and held.kind == "module" and len(expr.args) == 1 and not expr.keywords:
        return _keeps_batch(expr.args[0], batch_names, ctx, depth + 1)  # model(x): one output per sample
    return False


def _targets(target) -> set[str]:
    return {n.id for n in walk(target) if isinstance(n, ast.Name)}


def _loader_comprehension(comp, ctx, line) -> bool:
    """``[model(x) for x, _ in loader]``: one element per batch of a batched loader."""
    if not isinstance(comp, ast.ListComp) or len(comp.generators) != 1:
        return False
    gen = comp.generators[0]
    loader = _loader(gen.iter, ctx, line)
    return loader is not None and _batched(loader) and _keeps_batch(comp.elt, _targets(gen.target), ctx)


def _appended_per_batch(name, stack, ctx) -> bool:
    """``outs = []`` ... ``for x, y in loader: outs.append(model(x))`` ... ``torch.stack(outs)`` after the loop."""
    for loop in walk(ctx.function):
        if not (isinstance(loop, (ast.For, ast.AsyncFor)) and loop.end_lineno < stack.lineno):
            continue
        loader = _loader(loop.iter, ctx, loop.lineno)
        if loader is None or not _batched(loader):
            continue
        batch_names = _targets(loop.target)
        for call in walk(loop):
            if (
                isinstance(call, ast.Call)
                and isinstance(call.func, ast.Attribute)
                and call.func.attr == "append"
                and getattr(call.func.value, "id", None) == name
                and len(call.args) == 1
                and _keeps_batch(call.args[0], batch_names, ctx)
            ):
                return True
    return False


def _row_chunks(comp) -> bool:
    """``[x[b * n:(b + 1) * n] for b in range(k)]``: consecutive chunks of rows (batches of samples)."""
    if not isinstance(comp, ast.ListComp) or len(comp.generators) != 1:
        return False
    gen = comp.generators[0]
    if not (isinstance(gen.target, ast.Name) and getattr(gen.iter.func, "id", None) == "range"):
        return False
    elt = comp.elt
    while isinstance(elt, ast.Call) and isinstance(elt.func, ast.Attribute):
        elt = elt.func.value  # .expand(...), .to(device)
    if not isinstance(elt, ast.Subscript):
        return False
    first = elt.slice.elts[0] if isinstance(elt.slice, ast.Tuple) else elt.slice
    if not (
        isinstance(first, ast.Slice) and first.lower is not None and first.upper is not None and first.step is None
    ):
        return False
    i = gen.target.id

    def scaled(node, plus_one: bool) -> bool:  # b * n, (b + 1) * n
        if not (isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mult)):
            return False
        base = node.left
        if plus_one:
            return (
                isinstance(base, ast.BinOp)
                and isinstance(base.op, ast.Add)
                and getattr(base.left, "id", None) == i
                and _const(base.right, 1)
            )
        return getattr(base, "id", None) == i

    return scaled(first.lower, False) and scaled(first.upper, True)


def _reduced_over_joined_axis(stack, ctx) -> bool:
    """The stacked result (directly, or the name it is assigned to) is reduced over dim 0: a statistic
    meant over every sample, taken over the batches."""
    parent = ctx.parent(stack)
    candidates = []
    if isinstance(parent, ast.Attribute):
        candidates.append(parent)
    elif isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        name = parent.targets[0].id
        for n in walk(ctx.function):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > stack.lineno:
                up = ctx.parent(n)
                if isinstance(up, ast.Attribute) and up.value is n:
                    candidates.append(up)
    for attr in candidates:
        call = ctx.parent(attr)
        if attr.attr in _REDUCTIONS and isinstance(call, ast.Call) and call.func is attr:
            dim = call.args[0] if call.args else _kw(call, "dim")
            dims = dim.elts if isinstance(dim, ast.Tuple) else [dim]
            if any(_const(d, 0) for d in dims):
                return True
    return False


def _list_of_batches(arg, stack, ctx) -> bool:
    line = stack.lineno
    if _loader_comprehension(arg, ctx, line):
        return True
    if isinstance(arg, ast.Name):
        binding, _ = ctx.bindings.lookup(arg.id, ctx.chain(), line)
        if binding is None or binding.how != "assign":
            return False
        value = binding.value
        if isinstance(value, ast.List) and not value.elts:
            return _appended_per_batch(arg.id, stack, ctx)
        if _loader_comprehension(value, ctx, binding.line):
            return True
        if _row_chunks(value):
            return _reduced_over_joined_axis(stack, ctx)
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
            fn = ctx.bindings.module_function(value.func.id)
            returns = [n.value for n in walk(fn) if isinstance(n, ast.Return)] if fn is not None else []
            return len(returns) == 1 and _row_chunks(returns[0]) and _reduced_over_joined_axis(stack, ctx)
    return _row_chunks(arg) and _reduced_over_joined_axis(stack, ctx)


def _stacked_batches(node, ctx) -> bool:
    """``torch.stack`` of a list whose elements are whole batches (see the module's docstring)."""
    if not (_is_call_to(node, ctx, "torch.stack") and node.args) or ctx.function is None:
        return False
    return _list_of_batches(node.args[0], node, ctx)


RULE = Rule(
    "PTF265",
    ("stack-vs-cat",),
    "torch.stack of per-batch tensors adds a new axis: the result is (n_batches, B, ...), not (N, ...), so "
    "statistics over dim 0 run over batches, and a smaller last batch raises; join batches with torch.cat(..., dim=0)",
    _stacked_batches,
    nodes=CALL,
    calls=("stack",),
    needs=("stack",),
)
