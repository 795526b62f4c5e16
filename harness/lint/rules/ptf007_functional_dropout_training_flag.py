"""What: F.dropout in a module's forward (or a method it calls) without training=self.training.
Why: F.dropout's training defaults to True: it keeps dropping after model.eval().
Fix: pass training=self.training, or use an nn.Dropout module.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to
from torch_pitfalls.lint.rules.shared.flow import branch_side, climb
from torch_pitfalls.lint.rules.shared.modules import _module_method

DROPOUTS = tuple(
    f"torch.nn.functional.{d}"
    for d in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout")
)


_DROPOUT_MODULES = (
    "torch.nn.Dropout",
    "torch.nn.Dropout1d",
    "torch.nn.Dropout2d",
    "torch.nn.Dropout3d",
    "torch.nn.AlphaDropout",
)


def _dropout_without_training(node, ctx) -> bool:
    """F.dropout in a module's method without a training flag (``training`` defaults to True), or an
    nn.Dropout built and called there (``nn.Dropout(0.5)(x)``: a fresh module, always in training mode)."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Call)
        and _is_call_to(node.func, ctx, *_DROPOUT_MODULES)
        and _module_method(ctx)
        and ctx.function.name != "__init__"
    ):
        return True
    if not _is_call_to(node, ctx, *DROPOUTS):
        return False
    if _arg(node, 2, "training") is not None:  # passed: self.training, or True written out on purpose (a prenet)
        return False
    if _under_training_test(node, ctx):
        return False
    if _module_method(ctx):
        return True
    fn = ctx.function
    return isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.name == "forward"


def _under_training_test(node, ctx) -> bool:
    """``node`` runs only where the module is training: in the body of ``if self.training ...:`` (or of
    ``if p > 0 and self.training:``, ``x if self.training else y``), or in the ``else`` of
    ``if not self.training:``; the dropout then never runs in eval mode."""
    for up, child in climb(node, ctx):
        in_body = branch_side(up, child)
        if in_body is not None:
            test = up.test
            negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
            if (in_body and not negated and _reads_training(test)) or (
                not in_body and negated and _reads_training(test.operand)
            ):
                return True
    return False


def _reads_training(test) -> bool:
    """The test is ``self.training`` or a conjunction with it (``p > 0 and self.training``), or a
    disjunction of it with another deliberate switch (``self.training or self.apply_in_eval``)."""
    if isinstance(test, ast.BoolOp):
        return any(_reads_training(v) for v in test.values)
    return isinstance(test, ast.Attribute) and test.attr == "training" and getattr(test.value, "id", None) == "self"


RULE = Rule(
    "PTF007",
    ("functional-dropout-training-flag",),
    "F.dropout in a module's forward (or a method it calls) without training=self.training keeps dropping "
    "in eval mode; pass "
    "training=self.training or use nn.Dropout",
    _dropout_without_training,
    nodes=CALL,
)
