"""What: a loop over a state_dict() that averages or interpolates every entry in place (v /= n, v.mul_(decay),
v.lerp_(w, t), torch.stack([...]).mean(0)) without looking at its dtype.
Why: a state dict holds integer buffers too (BatchNorm's num_batches_tracked): an in-place float op on one
raises "result type Float can't be cast to the desired output type Long", after earlier entries changed.
Fix: average floating-point entries only (if v.is_floating_point()), carry integer ones over, or build a
new dict out of place."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of
from torch_pitfalls.lint.walking import kept_on, walk

_INPLACE_SCALING = ("div_", "mul_", "lerp_", "addcmul_", "addcdiv_")
_INPLACE_ADDING = ("add_", "sub_")
_DTYPE_WORDS = ("is_floating_point", "dtype", "is_complex", "num_batches_tracked", "type", "shape", "ndim", "dim")
_SAME_DTYPE_METHODS = ("clone", "detach", "cpu", "cuda", "to", "copy", "values", "items", "keys", "contiguous")
_CONTAINERS = ("list", "dict", "tuple", "collections.OrderedDict", "OrderedDict", "copy.deepcopy", "copy.copy")


def _state_dict_source(expr, ctx, chain, klass, depth: int = 0):
    """True where the expression holds a module's state_dict() (or its keys, values, items, a copy of it,
    a list of them); UNSURE for a checkpoint torch.load gives back; False otherwise."""
    if depth > 5 or expr is None:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.bindings.value_of(expr.id, chain, getattr(expr, "lineno", 1 << 30))
        return _state_dict_source(value, ctx, _scopes_of(value, ctx), klass, depth + 1) if value is not None else False
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and klass is not None:
        assigned = ctx.bindings.self_attributes(klass).get(expr.attr) or []
        if len(assigned) != 1:
            return False
        value = assigned[0][1]
        return _state_dict_source(value, ctx, _scopes_of(value, ctx), klass, depth + 1)
    if isinstance(expr, ast.Subscript):  # sds[0], ckpt["model"] of a loaded checkpoint
        inner = _state_dict_source(expr.value, ctx, chain, klass, depth + 1)
        return inner
    if isinstance(expr, (ast.ListComp, ast.DictComp, ast.GeneratorExp)):
        if any(g.ifs for g in expr.generators):
            return False  # filtered: the integer entries may be left out
        elt = expr.value if isinstance(expr, ast.DictComp) else expr.elt
        if isinstance(expr, ast.DictComp):  # {k: v.clone() for k, v in sd.items()}: the same entries
            source = _state_dict_source(expr.generators[0].iter, ctx, chain, klass, depth + 1)
            return source if _keeps_dtype(elt) else False
        return _state_dict_source(elt, ctx, chain, klass, depth + 1)  # [m.state_dict() for m in models]
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func)
    if _method(expr, "state_dict") and q is None:
        kind = ctx.bindings.held(expr.func.value, chain, expr.lineno, klass)
        return not (kind is not None and kind.kind in ("optimizer", "scheduler"))
    if q in ("torch.load",):
        return True if _writes_only_state_dicts(ctx) else UNSURE
    if (q in _CONTAINERS or getattr(expr.func, "id", None) in _CONTAINERS) and len(expr.args) == 1:
        return _state_dict_source(expr.args[0], ctx, chain, klass, depth + 1)
    if _method(expr, *_SAME_DTYPE_METHODS) and q is None and not _kw(expr, "dtype"):
        if _method(expr, "to") and any(_dtype_like(a) for a in expr.args):
            return False
        return _state_dict_source(expr.func.value, ctx, chain, klass, depth + 1)
    return False


def _writes_only_state_dicts(ctx) -> bool:
    """Every torch.save of the file writes a module's ``state_dict()``: the checkpoints it loads back are
    state dicts (a fine-tuner that saves each epoch's weights, then averages the last few)."""
    saves = [n for n in walk(ctx.module) if isinstance(n, ast.Call) and ctx.qualified(n.func) == "torch.save"]
    return bool(saves) and all(n.args and _method(n.args[0], "state_dict") for n in saves)


def _dtype_like(node) -> bool:
    return isinstance(node, ast.Attribute) and node.attr in ("float", "float32", "float16", "bfloat16", "double")


def _keeps_dtype(elt) -> bool:
    """``v``, ``v.clone()``, ``v.detach().cpu()``, ``torch.zeros_like(v)``: an entry of the same dtype."""
    if isinstance(elt, ast.Name):
        return True
    if isinstance(elt, ast.Call):
        name = getattr(elt.func, "attr", getattr(elt.func, "id", ""))
        if name in ("zeros_like", "clone", "detach", "cpu", "cuda", "deepcopy", "empty_like", "copy"):
            return not _kw(elt, "dtype")
    return False


def _loop_vars(loop, ctx, klass):
    """{name: ("key" | "value", sure)} for the loop's targets that run over a state dict's keys or values."""
    chain = ctx.chain()
    it, target = loop.iter, loop.target
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) in ("enumerate",) and it.args:
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return {}
        it, target = it.args[0], target.elts[1]
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) in ("list", "tuple", "sorted") and len(it.args) == 1:
        it = it.args[0]
    if isinstance(it, ast.Call) and getattr(it.func, "id", None) == "zip":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == len(it.args)):
            return {}
        out = {}
        for elt, arg in zip(target.elts, it.args):
            if isinstance(elt, ast.Name):
                source = _state_dict_source(arg, ctx, chain, klass)
                if source:
                    out[elt.id] = ("value" if _of(arg, "values") or not _of(arg, "keys") else "key", source)
                elif source is UNSURE:
                    out[elt.id] = ("value", UNSURE)
        return out
    source = _state_dict_source(it, ctx, chain, klass)
    if source is False:
        return {}
    if _of(it, "items"):
        if isinstance(target, ast.Tuple) and len(target.elts) == 2:
            return {e.id: (role, source) for e, role in zip(target.elts, ("key", "value")) if isinstance(e, ast.Name)}
        return {}
    if not isinstance(target, ast.Name):
        return {}
    role = "value" if _of(it, "values") or _values_list(it, ctx, chain, klass) else "key"
    return {target.id: (role, source)}


def _of(expr, method) -> bool:
    """``sd.values()``, ``list(sd.values())``: the expression ends in this method."""
    while isinstance(expr, ast.Call) and getattr(expr.func, "id", None) in ("list", "tuple", "sorted") and expr.args:
        expr = expr.args[0]
    return _method(expr, method)


def _values_list(it, ctx, chain, klass, depth: int = 0) -> bool:
    """A name bound to ``list(sd.values())`` (or a self attribute): iterating it gives the tensors."""
    if depth > 4:
        return False
    if isinstance(it, ast.Name):
        value = ctx.bindings.value_of(it.id, chain, it.lineno)
        return value is not None and _values_list(value, ctx, chain, klass, depth + 1)
    if isinstance(it, ast.Attribute) and getattr(it.value, "id", None) == "self" and klass is not None:
        assigned = ctx.bindings.self_attributes(klass).get(it.attr) or []
        return len(assigned) == 1 and _values_list(assigned[0][1], ctx, chain, klass, depth + 1)
    return _of(it, "values") or isinstance(it, ast.ListComp)


def _entry(node, loop_vars, ctx, chain, klass):
    """What an in-place op acts on is one entry of the state dict: the loop's value (``v``) or the dict
    indexed by the loop's key (``avg[k]`` where ``avg`` holds a state dict); its sureness, or False."""
    if isinstance(node, ast.Name) and loop_vars.get(node.id, ("", False))[0] == "value":
        return loop_vars[node.id][1]
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Name)
        and loop_vars.get(node.slice.id, ("", False))[0] == "key"
    ):
        return _state_dict_source(node.value, ctx, chain, klass) or False
    return False


def _float_operand(node) -> bool:
    """An operand that makes the result floating point: a float literal, a product or quotient (a
    weight times an entry, ``other[k] / n``), a name (a decay, a weight: a float in averaging code)."""
    if isinstance(node, ast.Constant):
        return isinstance(node.value, float)
    if isinstance(node, ast.BinOp):
        return isinstance(node.op, ast.Div) or _float_operand(node.left) or _float_operand(node.right)
    if isinstance(node, ast.Attribute):  # self.decay, args.alpha
        return node.attr not in ("shape", "size")
    return isinstance(node, ast.Name)


def _scaled_products(node) -> bool:
    """The value added holds a scaling: ``(1 - d) * v``, ``w[i] * sd[k]``, ``sd[k] / n``."""
    return any(isinstance(n, ast.BinOp) and isinstance(n.op, (ast.Mult, ast.Div)) for n in walk(node)) or any(
        isinstance(n, ast.Constant) and isinstance(n.value, float) for n in walk(node)
    )


def _in_place_float(node):
    """The target of an in-place op that gives a float result, or None."""
    if isinstance(node, ast.AugAssign):
        op, value = node.op, node.value
        if isinstance(op, ast.Div):
            return node.target
        if isinstance(op, ast.Mult) and _float_operand(value):
            return node.target
        if isinstance(op, (ast.Add, ast.Sub)) and _scaled_products(value):
            return node.target
        return None
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute):
        return None
    attr, args = node.func.attr, node.args
    if attr == "div_" or attr in ("lerp_", "addcmul_", "addcdiv_"):
        return node.func.value
    if attr == "mul_" and args and _float_operand(args[0]):
        return node.func.value
    if attr in _INPLACE_ADDING and (
        (_kw(node, "alpha") is not None and _float_operand(_kw(node, "alpha")))
        or any(_scaled_products(a) for a in args)
    ):
        return node.func.value
    return None


def _checked(loop, names, ctx) -> bool:
    """The loop looks at what an entry is before it changes it: a test (an ``if``, a conditional
    expression, an ``assert``) on the loop's names or on a dtype (``v.is_floating_point()``, ``v.dtype``,
    ``"num_batches_tracked" in k``)."""
    for n in walk(loop):
        test = getattr(n, "test", None) if isinstance(n, (ast.If, ast.IfExp, ast.Assert, ast.While)) else None
        if test is None:
            continue
        for m in walk(test):
            if isinstance(m, ast.Name) and m.id in names:
                return True
            if isinstance(m, ast.Attribute) and m.attr in _DTYPE_WORDS:
                return True
            if isinstance(m, ast.Constant) and isinstance(m.value, str) and "num_batches" in m.value:
                return True
    return False


def _stacked_mean(node, loop_vars, ctx, chain, klass):
    """``torch.stack([sd[k] for sd in sds]).mean(0)`` (or ``torch.mean(torch.stack(...), 0)``) where ``k``
    runs over a state dict's keys and ``sds`` holds state dicts: the mean of int64 entries raises."""
    stack = None
    if _method(node, "mean") and ctx.qualified(node.func) is None:
        stack = node.func.value
    elif ctx.qualified(node.func) == "torch.mean" and node.args:
        stack = node.args[0]
    if not (isinstance(stack, ast.Call) and ctx.qualified(stack.func) == "torch.stack" and stack.args):
        return False
    listed = stack.args[0]
    if not isinstance(listed, ast.ListComp) or len(listed.generators) != 1 or listed.generators[0].ifs:
        return False
    elt, gen = listed.elt, listed.generators[0]
    if not (
        isinstance(elt, ast.Subscript)
        and isinstance(elt.slice, ast.Name)
        and loop_vars.get(elt.slice.id, ("", False))[0] == "key"
        and isinstance(elt.value, ast.Name)
        and isinstance(gen.target, ast.Name)
        and elt.value.id == gen.target.id
    ):
        return False
    return _state_dict_source(gen.iter, ctx, chain, klass)


def _mean_call(node, ctx) -> bool:
    """``x.mean(...)`` or ``torch.mean(...)``: the stacked mean _stacked_mean reads."""
    return _method(node, "mean") or (isinstance(node, ast.Call) and ctx.qualified(node.func) == "torch.mean")


def _findings(loop, ctx):
    """The in-place float ops (and stacked means) on state-dict entries in the loop, in source order, with
    their sureness: kept on the loop (each op asks)."""

    def make(loop):
        klass = ctx.klass
        chain = ctx.chain()
        loop_vars = _loop_vars(loop, ctx, klass)
        if not loop_vars or _checked(loop, set(loop_vars), ctx):
            return ()
        out = []
        for n in walk(loop):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                return ()
            target = _in_place_float(n)
            sure = False
            if target is not None:
                sure = _entry(target, loop_vars, ctx, chain, klass)
                if sure and isinstance(target, ast.Name):  # v = v.float(): no longer the entry itself
                    binding, _ = ctx.bindings.lookup(target.id, chain, n.lineno)
                    sure = sure if binding is not None and binding.how == "iter" else False
            elif isinstance(n, ast.Call):
                sure = _stacked_mean(n, loop_vars, ctx, chain, klass)
            if sure or sure is UNSURE:
                out.append((n, sure))
        return tuple(sorted(out, key=lambda f: (f[0].lineno, f[0].col_offset)))

    return kept_on(loop, "_ptf257", make)


def _averaged_in_place(node, ctx):
    if _in_place_float(node) is None and not _mean_call(node, ctx):
        return False  # what _findings can report: an in-place float op or a mean (most calls are neither)
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        up = ctx.parent(up)
    while up is not None and isinstance(up, ast.For):
        found = _findings(up, ctx)
        if found:
            first, sure = found[0]
            return sure if first is node else False
        up = ctx.parent(up)
        while up is not None and not isinstance(up, (ast.For, ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
            up = ctx.parent(up)
    return False


RULE = Rule(
    "PTF257",
    ("state-dict-averaging-long-buffers",),
    "averaging a state_dict in place reaches its integer buffers (BatchNorm's num_batches_tracked is int64): "
    "a float in-place op raises 'result type Float can't be cast to the desired output type Long' after the "
    "entries before it were already changed; average floating-point entries only (if v.is_floating_point()) "
    "and carry the integer ones over",
    _averaged_in_place,
    nodes=(ast.AugAssign, ast.Call),
    needs=("state_dict", "load"),
)
