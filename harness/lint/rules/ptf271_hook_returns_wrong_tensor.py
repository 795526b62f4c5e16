"""What: a gradient hook returns a tensor built from the gradient's shape alone: torch.zeros(grad.shape).
Why: A hook's result replaces the gradient, and autograd first checks that it could stand in for it
(same dtype, device and size). torch.zeros(shape) is float32 on the CPU whatever the gradient is, so
backward raises "hook ... has changed the type of value" as soon as the model is on a GPU or in
float64/float16; in a float32 CPU run it happens to pass. A reduced gradient (grad.sum()) changes its size.
Fix: build the replacement from the gradient: torch.zeros_like(grad), grad * 0, grad.new_zeros(grad.shape).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _kw
from torch_pitfalls.lint.walking import walk

REGISTER = ("register_hook", "register_full_backward_hook", "register_backward_hook", "register_full_backward_pre_hook")
# factories that take a shape (or data) and default to float32 on the CPU
FACTORIES = frozenset(f"torch.{n}" for n in "zeros ones empty full rand randn randint tensor as_tensor".split())
_REDUCTIONS = ("sum", "mean", "norm", "amax", "amin", "prod")


def _hook_function(arg, ctx):
    """The hook registered: a lambda, a function of this module (or of the enclosing function), or a
    method of the class (``self._zero_hook``); None where it is something else."""
    if isinstance(arg, ast.Lambda):
        return arg
    if isinstance(arg, ast.Name):
        binding, _ = ctx.bindings.lookup(arg.id, ctx.chain(), arg.lineno)
        value = binding.value if binding is not None else None
        return value if isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if isinstance(arg, ast.Attribute) and getattr(arg.value, "id", None) == "self" and ctx.klass is not None:
        return next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == arg.attr), None)
    return None


def _params(fn) -> set[str]:
    a = fn.args
    return {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)} - {"self"}


def _candidates(expr, fn, ctx, depth: int = 0):
    """What a returned expression hands back as gradients: itself, a tuple's elements, a
    comprehension's element, either branch of ``a if c else b``, what a returned name was assigned."""
    if depth > 3:
        return
    if isinstance(expr, (ast.Tuple, ast.List)):
        for e in expr.elts:
            yield from _candidates(e, fn, ctx, depth + 1)
    elif isinstance(expr, (ast.ListComp, ast.GeneratorExp)):
        yield from _candidates(expr.elt, fn, ctx, depth + 1)
    elif (
        isinstance(expr, ast.Call)
        and getattr(expr.func, "id", None) in ("tuple", "list")
        and len(expr.args) == 1
        and isinstance(expr.args[0], (ast.ListComp, ast.GeneratorExp, ast.List, ast.Tuple))
    ):
        yield from _candidates(expr.args[0], fn, ctx, depth + 1)
    elif isinstance(expr, ast.IfExp):
        yield from _candidates(expr.body, fn, ctx, depth + 1)
        yield from _candidates(expr.orelse, fn, ctx, depth + 1)
    elif isinstance(expr, ast.Name) and not isinstance(fn, ast.Lambda):
        value = ctx.bindings.value_of(expr.id, (fn, *ctx.chain()), expr.lineno)
        if value is not None:
            yield from _candidates(value, fn, ctx, depth + 1)
    else:
        yield expr


def _mentions(expr, names) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names for n in walk(expr))


def _wrong_replacement(expr, params, tensor_hook: bool, ctx) -> bool:
    """A float32 CPU tensor from a torch factory given no device (``torch.zeros(grad.shape)``,
    ``torch.tensor(0.0)``), or for a tensor's hook its gradient reduced to one number."""
    if isinstance(expr, ast.Call):
        q = ctx.qualified(expr.func)
        if q in FACTORIES:
            if _kw(expr, "device") is not None or any(k.arg is None for k in expr.keywords):
                return False
            if q in ("torch.tensor", "torch.as_tensor"):  # a copy of the gradient keeps its device
                return bool(expr.args) and not _mentions(expr.args[0], params)
            return True
        if (
            tensor_hook
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr in _REDUCTIONS
            and not expr.args
            and not expr.keywords
            and isinstance(expr.func.value, ast.Name)
            and expr.func.value.id in params
        ):
            return True
    return False


def _hook_returns_wrong_tensor(node, ctx) -> bool:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr in REGISTER):
        return False
    arg = node.args[0] if node.args else _kw(node, "hook")
    fn = _hook_function(arg, ctx) if arg is not None else None
    if fn is None:
        return False
    kind = ctx.kind(node.func.value)
    if kind is not None and kind not in ("tensor", "module"):
        return False
    tensor_hook = node.func.attr == "register_hook"
    params = _params(fn)
    if isinstance(fn, ast.Lambda):
        returned = [fn.body]
    else:
        returned = [v for v, _ in returned_values(fn) or ()]
    return any(
        _wrong_replacement(c, params, tensor_hook, ctx) for value in returned for c in _candidates(value, fn, ctx)
    )


RULE = Rule(
    "PTF271",
    ("hook-returns-wrong-tensor",),
    "this gradient hook returns a tensor made without the gradient's dtype and device (float32 on the CPU), "
    "or of another size: backward raises 'hook has changed the type of value' on a GPU or in "
    "float64/float16; build it from the gradient: torch.zeros_like(grad), grad * 0, grad.new_zeros(...)",
    _hook_returns_wrong_tensor,
    nodes=CALL,
    calls=REGISTER,
    needs=("_hook",),
)
