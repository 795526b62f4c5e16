"""What: an elementwise regression loss between (N, 1) predictions (a model ending in Linear(_, 1)) and (N,) targets.
Why: (N, 1) against (N,) broadcasts to an (N, N) table of every prediction minus every target; the loss
averages it, the model learns the batch mean, and a perfect model still has a large loss (nn.MSELoss warns once
per call, a hand-written loss not at all).
Fix: make the shapes equal: pred.squeeze(1), or target.unsqueeze(1) / target.view_as(pred).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _arg
from torch_pitfalls.lint.rules.shared.shapes import COL, VEC, Shapes, _int_const

_CLASSES = ("torch.nn.MSELoss", "torch.nn.L1Loss", "torch.nn.SmoothL1Loss", "torch.nn.HuberLoss")
_FUNCTIONAL = tuple(f"torch.nn.functional.{n}" for n in ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss"))


def _loss_pair(node, ctx):
    """(prediction, target) of a call of an elementwise regression loss, or None."""
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func)
    if q in _FUNCTIONAL:
        return _arg(node, 0, "input"), _arg(node, 1, "target")
    if isinstance(node.func, ast.Call):
        found = ctx.qualified(node.func.func) in _CLASSES
    else:
        held = ctx.held(node.func) if isinstance(node.func, (ast.Name, ast.Attribute)) else None
        found = held is not None and held.kind == "loss" and held.what in _CLASSES
    return (_arg(node, 0, "input"), _arg(node, 1, "target")) if found else None


def _squared_difference(node) -> ast.BinOp | None:
    """``(a - b) ** 2``, ``(a - b).abs()``, ``(a - b).pow(2)``, ``torch.abs(a - b)``: the difference."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _int_const(node.right, 2):
        inner = node.left
    elif (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("abs", "pow", "square")
    ):
        inner = node.func.value
        if node.func.attr == "pow" and not (node.args and _int_const(node.args[0], 2)):
            return None
        if isinstance(inner, ast.Name) and inner.id in ("torch", "np", "numpy"):
            inner = node.args[0] if node.args else None
    else:
        return None
    return inner if isinstance(inner, ast.BinOp) and isinstance(inner.op, ast.Sub) else None


def _broadcast_loss(node, ctx):
    if ctx.function is None:
        return False
    shapes = Shapes(ctx)
    chain, line, klass = ctx.chain(), node.lineno, ctx.klass
    pair = _loss_pair(node, ctx)
    if pair is not None:
        pred, target = pair
        if pred is None or target is None:
            return False
        p, t = shapes.of(pred, chain, line, klass), shapes.of(target, chain, line, klass)
        if p == COL:
            return True if t == VEC else (UNSURE if t is None else False)
        return p == VEC and t == COL  # the arguments the other way round: the same (N, N) table
    diff = _squared_difference(node)
    if diff is None:
        return False
    sides = {shapes.of(diff.left, chain, line, klass), shapes.of(diff.right, chain, line, klass)}
    return sides == {COL, VEC}


RULE = Rule(
    "PTF241",
    ("target-shape-broadcast",),
    "an elementwise regression loss between (N, 1) predictions and (N,) targets broadcasts to an (N, N) "
    "table: every prediction is compared with every target and the model learns the batch mean; make the "
    "shapes equal (pred.squeeze(1), or target.unsqueeze(1))",
    _broadcast_loss,
    nodes=(ast.Call, ast.BinOp),
    needs=("_loss", "Loss", "abs", "pow", "**"),
)
