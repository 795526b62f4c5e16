"""What: Sigmoid outputs passed to BCEWithLogitsLoss / binary_cross_entropy_with_logits.
Why: It applies a sigmoid itself: squashed twice, the inputs land in [0.5, 0.73] and the loss cannot go
below ~0.31.
Fix: pass the raw logits (or use BCELoss on probabilities).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _method
from torch_pitfalls.lint.rules.shared.flow import _assigned, _chosen, _dead
from torch_pitfalls.lint.rules.shared.losses import _loss_call

_SIGMOIDS = ("torch.sigmoid", "torch.nn.functional.sigmoid", "torch.special.expit", "torch.Tensor.sigmoid")


_KEEPS_VALUES = ("squeeze", "unsqueeze", "view", "reshape", "flatten", "float", "double", "to", "contiguous", "view_as")


def _sigmoid_call(call: ast.Call, ctx) -> bool:
    """``torch.sigmoid(x)``, ``F.sigmoid(x)``, ``x.sigmoid()``, ``nn.Sigmoid()(x)``, or a ``self.`` module
    bound to nn.Sigmoid."""
    func = call.func
    if ctx.qualified(func) in _SIGMOIDS:
        return True
    if isinstance(func, ast.Call):
        return ctx.qualified(func.func) == "torch.nn.Sigmoid"
    if (
        isinstance(func, ast.Attribute)
        and func.attr == "sigmoid"
        and ctx.qualified(func) is None
        and not (isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"))
    ):
        return True  # x.sigmoid(), the tensor method (not a method of the class itself)
    held = ctx.held(func)
    return held is not None and held.kind == "module" and held.what == "torch.nn.Sigmoid"


def _ctor_ends_in_sigmoid(ctor, ctx, line: int, depth: int) -> bool:
    """A module built as nn.Sigmoid(), or an nn.Sequential whose last layer is one."""
    if not isinstance(ctor, ast.Call):
        return False
    q = ctx.qualified(ctor.func)
    if q == "torch.nn.Sigmoid":
        return True
    if q == "torch.nn.Sequential" and ctor.args and depth < 4:
        last = _assigned(ctor.args[-1], ctx, line)
        return _ctor_ends_in_sigmoid(last, ctx, line, depth + 1)
    return False


def _sigmoid_output(expr, ctx, line: int, depth: int = 0) -> bool:
    """The expression holds a sigmoid's output: directly, through names, shape-only methods
    (``.squeeze()``, ``.view()``), an index, or a model built to end in a sigmoid (``nn.Sequential(...,
    nn.Sigmoid())``, a class whose forward returns one, the branch of ``a if flag else b`` taken)."""
    if expr is None or depth > 8:
        return False
    d = depth + 1
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        if value is not None:
            return _sigmoid_output(_chosen(value, ctx, line), ctx, line, d)
        held = ctx.held(expr, line)
        return held is not None and held.kind == "tensor" and held.what == "sigmoid"
    if isinstance(expr, ast.Subscript):
        return _sigmoid_output(expr.value, ctx, line, d)
    if not isinstance(expr, ast.Call):
        return False
    if _sigmoid_call(expr, ctx):
        return True
    if _method(expr, *_KEEPS_VALUES):
        return _sigmoid_output(expr.func.value, ctx, line, d)
    held = ctx.held(expr, line)
    if held is not None and held.kind == "tensor" and held.what == "sigmoid":
        return True  # a model whose output the bindings know ends in a sigmoid
    callee = _assigned(expr.func, ctx, line)
    return _ctor_ends_in_sigmoid(callee, ctx, line, 0)


def _sigmoid_into_bce_with_logits(node, ctx) -> bool:
    """BCEWithLogitsLoss / binary_cross_entropy_with_logits given a sigmoid's output as its input
    (``loss_fn(torch.sigmoid(z), y)``, a model ending in nn.Sigmoid): the loss applies its own sigmoid,
    so it sees values in [0.5, 0.73] and cannot fall below about 0.31 (positives) and 0.69
    (negatives). A sigmoid of the *target* (soft labels) is not this. The fix: pass the logits (or
    keep the sigmoid and use BCELoss)."""
    if not _loss_call(node, ctx, "binary_cross_entropy_with_logits", "torch.nn.BCEWithLogitsLoss"):
        return False
    return _sigmoid_output(_arg(node, 0, "input"), ctx, node.lineno) and not _dead(node, ctx)


RULE = Rule(
    "PTF202",
    ("sigmoid-before-bce-with-logits",),
    "BCEWithLogitsLoss applies a sigmoid itself: given sigmoid outputs it squashes them twice (inputs in "
    "[0.5, 0.73]) and the loss cannot go below ~0.31; pass the raw logits (or use BCELoss on probabilities)",
    _sigmoid_into_bce_with_logits,
    nodes=CALL,
    needs=("with_logits", "WithLogits"),
)
