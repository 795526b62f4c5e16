"""What: torch.arange with float bounds whose length in floating point is not the decimal one.
Why: The length is ceil((end - start) / step) in floating point: the range gets an extra element (the
end itself) or loses one.
Fix: use an integer count (start + step * torch.arange(n)) or torch.linspace.
"""

from __future__ import annotations

import ast
import math
from fractions import Fraction

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to, _kw
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values


def _number(expr, ctx, line: int, depth: int = 0):
    """(the value as written, exactly; the value as Python computes it) of a numeric literal, a name
    bound to one, or arithmetic of those; None otherwise."""
    if depth > 4 or expr is None:
        return None
    if isinstance(expr, ast.Constant) and type(expr.value) in (int, float):
        return Fraction(repr(expr.value)), expr.value
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, (ast.USub, ast.UAdd)):
        inner = _number(expr.operand, ctx, line, depth + 1)
        sign = -1 if isinstance(expr.op, ast.USub) else 1
        return None if inner is None else (sign * inner[0], sign * inner[1])
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.Div)):
        left, right = _number(expr.left, ctx, line, depth + 1), _number(expr.right, ctx, line, depth + 1)
        if left is None or right is None or (isinstance(expr.op, ast.Div) and right[0] == 0):
            return None
        op = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b, ast.Mult: lambda a, b: a * b}.get(
            type(expr.op), lambda a, b: a / b
        )
        return op(left[0], right[0]), op(left[1], right[1])
    if isinstance(expr, ast.Name):  # a constant bound once: START, END, STEP = 0.5, 0.8, 0.1
        values = _values(expr.id, _scopes_of(expr, ctx), line, ctx.bindings)
        return _number(values[0], ctx, line, depth + 1) if values and len(values) == 1 else None
    return None


_FLOAT_DTYPES = ("float", "float32", "float64", "double", "half", "float16", "bfloat16")


def _arange_length_off(node, ctx) -> bool:
    """``torch.arange(start, end, step)`` with literal bounds (or names bound to literals) where the
    length torch computes, ``ceil((end - start) / step)`` in double precision, differs from the
    length of the decimal range as written: ``arange(0.5, 0.8, 0.1)`` has 4 elements, the last one 0.8,
    the end the call meant to exclude. Worked out exactly, so a range that rounds the expected way
    stays quiet. The fix: an integer count, ``start + step * torch.arange(n)``, or ``torch.linspace``."""
    if not _is_call_to(node, ctx, "torch.arange") or len(node.args) > 3:
        return False
    dtype = _kw(node, "dtype")
    if dtype is not None and getattr(dtype, "attr", getattr(dtype, "id", None)) not in _FLOAT_DTYPES:
        return False
    given = [_arg(node, 0, "start"), _arg(node, 1, "end"), _arg(node, 2, "step")]
    if given[1] is None or given[2] is None or given[0] is None:
        return False
    numbers = [_number(g, ctx, node.lineno) for g in given]
    if any(n is None for n in numbers) or not any(isinstance(n[1], float) for n in numbers):
        return False
    (start, fstart), (end, fend), (step, fstep) = numbers
    if step == 0 or fstep == 0:
        return False
    exact = math.ceil((end - start) / step)
    computed = math.ceil((float(fend) - float(fstart)) / float(fstep))
    return exact != computed


RULE = Rule(
    "PTF210",
    ("arange-float-step-includes-end",),
    "with these float bounds arange's length, ceil((end - start) / step) in floating point, is not the "
    "decimal one: the range gets an extra element (the end itself) or loses one; use an integer count "
    "(start + step * torch.arange(n)) or torch.linspace",
    _arange_length_off,
    nodes=CALL,
    calls=("arange",),
)
