"""What: A weight set from a NumPy array that is float64 by default (np.random.randn, np.zeros, ...).
Why: torch.from_numpy keeps float64: the weight no longer matches the model's float32 inputs (a dtype
error in forward).
Fix: convert with .float(), or copy_ into the existing parameter.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _is_call_to, _kw, _method

_NUMPY_RANDOM = ("normal", "uniform", "randn", "rand", "standard_normal", "random")


_NUMPY_FLOAT64 = ("numpy.zeros", "numpy.ones", "numpy.empty", "numpy.eye", "numpy.linspace")


def _float64_numpy(expr, ctx) -> bool:
    """An ndarray that is float64: NumPy's makers without a dtype (np.random.normal, rng.normal,
    np.zeros, ...), not cast with .astype(np.float32)."""
    value = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    if not isinstance(value, ast.Call) or _kw(value, "dtype") is not None:
        return False
    func = value.func
    q = ctx.qualified(func) or ""
    if (q.startswith("numpy.random.") and q.split(".")[-1] in _NUMPY_RANDOM) or q in _NUMPY_FLOAT64:
        return True
    if isinstance(func, ast.Attribute) and func.attr in _NUMPY_RANDOM and isinstance(func.value, ast.Name):
        gen = ctx.value_of(func.value, value.lineno)  # rng = np.random.default_rng(0); rng.normal(...)
        return isinstance(gen, ast.Call) and ctx.qualified(gen.func) in (
            "numpy.random.default_rng",
            "numpy.random.RandomState",
            "numpy.random.Generator",
        )
    return False


def _float64_weights(node, ctx) -> bool:
    """``layer.weight.data = torch.from_numpy(float64 array)`` (or wrapped in nn.Parameter): a float64
    parameter in a float32 model; the next forward fails on the dtype mismatch."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)):
        return False
    target = node.targets[0]
    attr = target.value.attr if target.attr == "data" and isinstance(target.value, ast.Attribute) else target.attr
    if attr not in ("weight", "bias"):
        return False
    value = node.value
    if _is_call_to(value, ctx, "torch.nn.Parameter", "torch.nn.parameter.Parameter") and value.args:
        value = value.args[0]
    while _method(value, "to", "cuda", "cpu", "requires_grad_", "clone", "contiguous"):
        if _method(value, "to") and any("float" in ast.unparse(a) or "half" in ast.unparse(a) for a in value.args):
            return False  # .to(torch.float32): converted
        value = value.func.value
    return (
        _is_call_to(value, ctx, "torch.from_numpy")
        and bool(value.args)
        and _float64_array(value.args[0], ctx, node.lineno)
    )


# NumPy functions whose result is float64 when an argument is (linear algebra keeps its input's dtype)
_NUMPY_KEEPS_DTYPE = frozenset(
    f"numpy.{f}"
    for f in """matmul dot outer inner tensordot einsum kron
linalg.svd linalg.qr linalg.eigh linalg.eig linalg.inv linalg.pinv linalg.solve linalg.cholesky linalg.lstsq
linalg.matrix_power""".split()
)


_FLOAT64_DTYPES = ("numpy.float64", "numpy.double", "numpy.float_", "float")


_ARRAY_SAME_DTYPE_METHODS = ("copy", "reshape", "transpose", "squeeze", "ravel", "flatten", "clip", "round")


def _float64_array(expr, ctx, line, depth=0) -> bool:
    """A NumPy array that is float64, followed through the code that made it: a maker without a dtype,
    ``.astype(np.float64)``, then slicing, arithmetic (float64 wins NumPy's promotion) and linear
    algebra of such an array (``U, S, Vt = np.linalg.svd(w)``; ``(U[:, :r] * S[:r]) @ Vt[:r]``)."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        if ctx.function is None:
            return False
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how not in ("assign", "item") or binding.value is None:
            return False
        return _float64_array(binding.value, ctx, binding.line, depth + 1)
    if isinstance(expr, ast.Subscript) or (isinstance(expr, ast.Attribute) and expr.attr == "T"):
        return _float64_array(expr.value, ctx, line, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div, ast.MatMult, ast.Pow)):
        return _float64_array(expr.left, ctx, line, depth + 1) or _float64_array(expr.right, ctx, line, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    if _method(expr, "astype"):
        dtype = expr.args[0] if expr.args else _kw(expr, "dtype")
        return dtype is not None and (
            ctx.qualified(dtype) in _FLOAT64_DTYPES
            or getattr(dtype, "id", None) == "float"
            or (isinstance(dtype, ast.Constant) and dtype.value in ("float64", "double", "f8"))
        )
    if _method(expr, *_ARRAY_SAME_DTYPE_METHODS):
        return _float64_array(expr.func.value, ctx, line, depth + 1)
    if ctx.qualified(expr.func) in _NUMPY_KEEPS_DTYPE and _kw(expr, "dtype") is None:
        return any(_float64_array(a, ctx, line, depth + 1) for a in expr.args)
    return _float64_numpy(expr, ctx)


RULE = Rule(
    "PTF029",
    ("numpy-float64-weights",),
    "NumPy makes float64 arrays by default: torch.from_numpy keeps float64, so this weight no longer matches "
    "the model's float32 inputs (a dtype error in forward); convert with .float() or "
    "copy_ into the existing parameter",
    _float64_weights,
    nodes=ast.Assign,
)
