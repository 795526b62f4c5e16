"""What: A tensor sliced with a negative step (t[::-1]).
Why: Tensors do not support a negative slice step: ValueError.
Fix: use t.flip(dim).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule


def _negative_step(node, ctx) -> bool:
    """``t[::-1]`` on a tensor: torch refuses negative slice steps (ValueError)."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    negative = any(
        isinstance(p, ast.Slice) and isinstance(p.step, ast.UnaryOp) and isinstance(p.step.op, ast.USub) for p in parts
    )
    held = ctx.held(node.value) if negative else None
    return held is not None and held.kind == "tensor" and held.what != "output"  # a module's output may be a tuple


RULE = Rule(
    "PTF019",
    ("negative-step-slicing",),
    "tensors do not support a negative slice step (ValueError); use t.flip(dim)",
    _negative_step,
    nodes=ast.Subscript,
)
