"""What: gradcheck on float32 inputs or a float32 module.
Why: float32 finite differences are too coarse for gradcheck's tolerances: correct gradients can be
rejected.
Fix: use dtype=torch.float64 inputs and module.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to, _kw, _method

_DOUBLE = ("float64", "double")


def _single_precision(expr, ctx) -> bool | None:
    """True: the tensor is float32 (a factory's default dtype, or ``.float()``); False: float64;
    None: cannot tell."""
    value = ctx.resolve(expr, getattr(expr, "lineno", 1 << 30))
    while _method(value, "requires_grad_", "detach", "clone", "contiguous", "cuda", "cpu"):
        value = value.func.value  # these keep the dtype
    if _method(value, "double"):
        return False
    if _method(value, "float"):
        return True
    if _method(value, "to", "type"):
        text = ast.unparse(value)
        return False if any(d in text for d in _DOUBLE) else (True if "float32" in text else None)
    if (
        isinstance(value, ast.Call)
        and (ctx.qualified(value.func) or "").split(".")[-1] in ("rand", "randn", "zeros", "ones", "empty", "full")
        and (ctx.qualified(value.func) or "").count(".") == 1
    ):
        dtype = _kw(value, "dtype")
        if dtype is None:
            return True
        text = ast.unparse(dtype)
        return False if any(d in text for d in _DOUBLE) else (True if "float32" in text or "half" in text else None)
    return None


def _gradcheck_single_precision(node, ctx) -> bool:
    if not _is_call_to(
        node,
        ctx,
        "torch.autograd.gradcheck",
        "torch.autograd.gradcheck.gradcheck",
        "torch.autograd.gradgradcheck",
        "torch.autograd.gradcheck.gradgradcheck",
    ):
        return False
    inputs = _arg(node, 1, "inputs")
    elements = inputs.elts if isinstance(inputs, (ast.Tuple, ast.List)) else [inputs]
    verdicts = [_single_precision(e, ctx) for e in elements if e is not None]
    if any(v is True for v in verdicts):
        return "set_default_dtype" not in ast.unparse(ctx.module)
    if any(v is False for v in verdicts):
        return False
    # unknown inputs: the function hands the inputs float32 and never float64
    text = ast.unparse(ctx.function) if ctx.function is not None else ""
    return "float32" in text and not any(d in text for d in _DOUBLE)


RULE = Rule(
    "PTF014",
    ("gradcheck-float32",),
    "gradcheck in float32 can reject correct gradients (float32 finite differences are too coarse for its "
    "tolerances); use "
    "dtype=torch.float64 inputs and module",
    _gradcheck_single_precision,
    nodes=CALL,
    calls=("gradcheck", "gradgradcheck"),
)
