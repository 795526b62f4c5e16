"""What the loss rules share: a call of a given loss (functional, class, or a name bound to one),
and an expression that holds probabilities (softmax, sigmoid)."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _bound_name, _called_name
from torch_pitfalls.lint.rules.shared.flow import context_at

SOFTMAXES = ("softmax", "Softmax", "sigmoid")


# torch.nn.functional losses (their reduction keyword defaults to "mean": one number)
FUNCTIONAL_LOSSES = frozenset(
    """cross_entropy nll_loss mse_loss l1_loss smooth_l1_loss huber_loss binary_cross_entropy
binary_cross_entropy_with_logits kl_div poisson_nll_loss gaussian_nll_loss cosine_embedding_loss
margin_ranking_loss hinge_embedding_loss soft_margin_loss multilabel_soft_margin_loss multi_margin_loss
multilabel_margin_loss triplet_margin_loss ctc_loss""".split()
)


def _loss_call(node, ctx, functional: str, *classes: str) -> bool:
    """A call of this loss: ``F.<functional>(...)``, ``nn.<Class>()(...)``, or a name or ``self.``
    attribute bound to an instance of the class (``criterion = nn.CrossEntropyLoss()``)."""
    if not isinstance(node, ast.Call):
        return False
    if ctx.qualified(node.func) == f"torch.nn.functional.{functional}":
        return True
    if isinstance(node.func, ast.Call):
        return ctx.qualified(node.func.func) in classes
    if not _bound_name(node.func):
        return False
    held = ctx.held(node.func)
    return held is not None and held.kind == "loss" and held.what in classes


def _probabilities(node, ctx, depth: int = 0) -> str | None:
    """``softmax``/``sigmoid`` where the expression holds an activation's probabilities (through
    names, ``self.`` modules, ``nn.Softmax()(x)``, ``x.softmax(1)``, a Sequential ending in one, a helper of the
    file or a method of the class that returns them: ``self.soften(logits)``)."""
    if node is None or depth > 4:
        return None
    helper = _helper_called(node, ctx)
    if helper is not None:
        kinds = {
            _probabilities(v, at, depth + 1) for v, _ in returned_values(helper) or () if (at := context_at(v, ctx))
        }
        return kinds.pop() if len(kinds) == 1 else None
    if isinstance(node, ast.Subscript):  # probs[train_mask], probs[:, :k]: rows or columns of the same probabilities
        return _probabilities(node.value, ctx)
    name = _called_name(node)
    if isinstance(node, ast.Call) and name in SOFTMAXES:  # F.softmax(x), x.softmax(1), nn.Softmax(1)(x)
        return name.lower()
    held = ctx.held(node)
    if held is not None and held.kind == "tensor" and held.what in ("softmax", "sigmoid"):
        return held.what
    value = ctx.value_of(node, getattr(node, "lineno", 1 << 30))  # p = s.div(t).softmax(1): the receiver's kind unknown
    if (
        isinstance(value, ast.Call)
        and _called_name(value) in SOFTMAXES
        and isinstance(value.func, (ast.Attribute, ast.Name))
    ):
        return _called_name(value).lower()
    return None


def _helper_called(node, ctx):
    """The function of the file a call runs: ``soften(x)`` (a module-level function) or ``self.soften(x)`` (a
    method of the enclosing class); None for anything else."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    if isinstance(func, ast.Name):
        return ctx.bindings._local_function(node, ctx.chain(), node.lineno)
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        return next((m for m in ctx.klass.body if isinstance(m, ast.FunctionDef) and m.name == func.attr), None)
    return None
