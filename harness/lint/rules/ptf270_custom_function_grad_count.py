"""What: a torch.autograd.Function whose backward returns fewer (or more) values than forward takes inputs.
Why: Autograd matches backward's results to forward's inputs by position, one per input after ctx
(None for a flag, a number, or an input without a gradient); any other count raises "returned an
incorrect number of gradients" at loss.backward(). Extra values are accepted only when they are None.
Fix: return one value per forward input, None where there is no gradient.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.rules.shared.flow import _dead
from torch_pitfalls.lint.walking import kept_on, walk

FUNCTION_BASES = (
    "torch.autograd.Function",
    "torch.autograd.function.Function",
    "torch.autograd.function.InplaceFunction",
    "torch.autograd.function.FunctionWithHooks",
)
# tensor methods that return one tensor (not a tuple: split, chunk, unbind, topk, max(dim), sort...)
_ONE_TENSOR_METHODS = frozenset(
    """clone neg mul div add sub sum mean view reshape expand expand_as contiguous t transpose permute to float half
double bfloat16 squeeze unsqueeze masked_fill clamp clip sign abs exp log sqrt pow matmul mm bmm sum_to_size
new_zeros new_ones zeros_like flatten flip roll repeat type_as view_as reshape_as cumsum""".split()
)


def _function_class(klass, ctx, depth: int = 0) -> bool:
    """A subclass of torch.autograd.Function, directly or through classes of this file."""
    for base in klass.bases:
        if ctx.qualified(base) in FUNCTION_BASES:
            return True
        if isinstance(base, ast.Name) and depth < 6:
            parent = ctx.bindings.classes().get(base.id)
            if parent is not None and parent is not klass and _function_class(parent, ctx, depth + 1):
                return True
    return False


def _method_of(klass, name: str, ctx, depth: int = 0):
    """The method ``name`` of the class, or the one it inherits from a class of this file."""
    found = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
    if found is not None or depth > 6:
        return found
    for base in klass.bases:
        parent = ctx.bindings.classes().get(base.id) if isinstance(base, ast.Name) else None
        if parent is not None and parent is not klass:
            found = _method_of(parent, name, ctx, depth + 1)
            if found is not None:
                return found
    return None


def _static(fn) -> bool:
    return any(getattr(d, "id", getattr(d, "attr", None)) == "staticmethod" for d in fn.decorator_list)


def _inputs(klass, ctx) -> tuple[int, int] | None:
    """(fewest, most) inputs ``apply`` passes to forward: its parameters after ctx (all of them where
    the class splits out ``setup_context``), fewer by its defaults; None for ``*args`` or a legacy
    (non-static) forward."""
    forward = _method_of(klass, "forward", ctx)
    if forward is None or not _static(forward) or forward.args.vararg is not None:
        return None
    a = forward.args
    params = [*a.posonlyargs, *a.args]
    if _method_of(klass, "setup_context", ctx) is None:
        params = params[1:]  # ctx
    return len(params) - len(a.defaults), len(params)


def _applied_or_overridden(module) -> tuple[dict[str, set], set[str]]:
    """(class -> the numbers of arguments its ``.apply(...)`` calls in the module pass (-1 for
    ``*args``), the classes of the module a subclass overrides ``backward`` of)."""
    applied: dict[str, set] = {}
    overridden: set[str] = set()
    for n in walk(module):
        if isinstance(n, ast.Attribute) and n.attr == "apply" and isinstance(n.value, ast.Name):
            applied.setdefault(n.value.id, set())
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "apply"
            and isinstance(n.func.value, ast.Name)
        ):
            starred = any(isinstance(a, ast.Starred) for a in n.args)
            applied.setdefault(n.func.value.id, set()).add(-1 if starred else len(n.args))
        elif isinstance(n, ast.ClassDef) and any(
            isinstance(m, ast.FunctionDef) and m.name == "backward" for m in n.body
        ):
            overridden.update(b.id for b in n.bases if isinstance(b, ast.Name))
    return applied, overridden


def _one_tensor(expr, backward, ctx, depth: int = 0) -> bool:
    """An expression that is one tensor: one of backward's gradient parameters, or arithmetic and
    single-tensor methods on them, or a torch function that returns one tensor."""
    if depth > 6:
        return False
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), expr.lineno)
        if binding is None:
            return False
        if binding.how == "param":
            return backward.args.vararg is None and expr.id in {a.arg for a in backward.args.args[1:]}
        if binding.how == "assign":
            return _one_tensor(binding.value, backward, ctx, depth + 1)
        return False
    if isinstance(expr, ast.BinOp):
        return _one_tensor(expr.left, backward, ctx, depth + 1) or _one_tensor(expr.right, backward, ctx, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _one_tensor(expr.operand, backward, ctx, depth + 1)
    if isinstance(expr, ast.Call):
        q = ctx.qualified(expr.func)
        if q is not None:
            held = ctx.held(expr)
            return held is not None and held.kind == "tensor"
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in _ONE_TENSOR_METHODS:
            return _one_tensor(expr.func.value, backward, ctx, depth + 1)
    return False


def _counts(value, backward, ctx, depth: int = 0) -> list[tuple[int, list]] | None:
    """(how many values, the elements) each way the returned expression can go; None where that
    cannot be read (a tuple built elsewhere, ``*grads``, a list of unknown length)."""
    if depth > 3:
        return None
    if isinstance(value, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        return [(len(value.elts), value.elts)]
    if isinstance(value, ast.IfExp):
        a, b = _counts(value.body, backward, ctx, depth + 1), _counts(value.orelse, backward, ctx, depth + 1)
        return None if a is None or b is None else a + b
    if isinstance(value, ast.Constant) and value.value is None:
        return [(1, [value])]
    if isinstance(value, ast.Name):
        assigned = ctx.value_of(value, value.lineno)
        if isinstance(assigned, ast.Tuple):
            return _counts(assigned, backward, ctx, depth + 1)
    if _one_tensor(value, backward, ctx):
        return [(1, [value])]
    return None


def _wrong_count(node, ctx) -> bool:
    """A ``return`` of a Function's ``backward`` whose number of values is not forward's number of
    inputs: fewer than forward requires, or more than it takes with an extra value that is not None."""
    fn, klass = ctx.function, ctx.klass
    if not (
        isinstance(node, ast.Return)
        and node.value is not None
        and isinstance(fn, ast.FunctionDef)
        and fn.name == "backward"
        and klass is not None
        and fn in klass.body
        and _static(fn)
        and _function_class(klass, ctx)
    ):
        return False
    if _dead(node, ctx):
        return False  # never reached (a backward that raises NotImplementedError first)
    inputs = _inputs(klass, ctx)
    counts = _counts(node.value, fn, ctx)
    if inputs is None or counts is None:
        return False
    fewest, most = inputs
    applied, overridden = kept_on(ctx.module, "_ptf270_classes", _applied_or_overridden)
    if klass.name in overridden and klass.name not in applied:
        return False  # a base whose backward a subclass here replaces, applied only through the subclass
    passed = applied.get(klass.name, set())
    if -1 not in passed:  # ``Sign.apply(x, True)`` passes the defaulted flag too: it needs its slot
        fewest = max([fewest, *(p for p in passed if p <= most)])
    for count, elts in counts:
        if count < fewest:
            return True
        if any(_a_gradient(e, ctx) for e in elts[most:]):
            return True
    return False


def _a_gradient(expr, ctx) -> bool:
    """An extra returned value that is not None: a computed value, or a name assigned one."""
    if isinstance(expr, ast.Name):
        expr = ctx.value_of(expr, expr.lineno)
    return isinstance(expr, (ast.Call, ast.BinOp, ast.UnaryOp, ast.Subscript, ast.Attribute))


RULE = Rule(
    "PTF270",
    ("custom-function-grad-count",),
    "this autograd.Function's backward returns a different number of values than forward takes inputs "
    "(after ctx): loss.backward() raises 'returned an incorrect number of gradients'; return one value "
    "per forward input, None for the ones without a gradient",
    _wrong_count,
    nodes=ast.Return,
    needs=("Function",),
)
