"""What: F.dropout in a module's forward (or a method it calls) without training=self.training.
Why: F.dropout's training defaults to True: it keeps dropping after model.eval().
Fix: pass training=self.training, or use an nn.Dropout module.
"""

from __future__ import annotations

import ast
import os

from torch_pitfalls.lint.package import named_elsewhere
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _const, _is_call_to
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, branch_side, climb
from torch_pitfalls.lint.rules.shared.modules import _module_method
from torch_pitfalls.lint.walking import walk

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
            if (in_body and not negated and _reads_training(test, ctx)) or (
                not in_body and negated and _reads_training(test.operand, ctx)
            ):
                return True
    return False


def _reads_training(test, ctx) -> bool:
    """The test is ``self.training`` or a conjunction with it (``p > 0 and self.training``), or a
    disjunction of it with another deliberate switch (``self.training or self.apply_in_eval``); or a switch
    of the module's own that the code flips (``if self.use_dropout is True:``, _flipped)."""
    if isinstance(test, ast.BoolOp):
        return any(_reads_training(v, ctx) for v in test.values)
    if (
        isinstance(test, ast.Compare)
        and len(test.ops) == 1
        and isinstance(test.ops[0], (ast.Is, ast.Eq))
        and _const(test.comparators[0], True)
    ):
        test = test.left
    if not (isinstance(test, ast.Attribute) and getattr(test.value, "id", None) == "self"):
        return False
    return test.attr == "training" or _flipped(test.attr, ctx)


def _flipped(attr: str, ctx) -> bool:
    """``self.<attr>`` is a switch set at run time, not a setting fixed at construction: the file assigns
    ``<obj>.<attr>`` outside ``__init__`` (``model.use_dropout = False`` before acting), or never assigns it in
    an ``__init__`` and another file of the package names it (a base class or a trainer that sets it)."""
    inits = outside = False
    for n in walk(ctx.module):
        if isinstance(n, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(isinstance(t, ast.Attribute) and t.attr == attr for t in targets):
                scope = _scopes_of(n, ctx)[0]
                in_init = getattr(scope, "name", None) == "__init__"
                inits, outside = inits or in_init, outside or not in_init
    if outside:
        return True
    return not inits and ctx.path is not None and os.path.isfile(ctx.path) and named_elsewhere(ctx.path, attr)


RULE = Rule(
    "PTF007",
    ("functional-dropout-training-flag",),
    "F.dropout in a module's forward (or a method it calls) without training=self.training keeps dropping "
    "in eval mode; pass "
    "training=self.training or use nn.Dropout",
    _dropout_without_training,
    nodes=CALL,
)
