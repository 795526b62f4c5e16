"""What: the log taken of softmax (or sigmoid) probabilities: torch.log(F.softmax(x, dim)).
Why: A probability that underflows to 0 in float32 (a logit ~100 below the largest) has a log of
-inf, and the loss or its gradient becomes inf or NaN; log_softmax computes the same values from the
logits without ever forming the tiny probability.
Fix: F.log_softmax(x, dim) (F.logsigmoid(x) for a sigmoid).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _method
from torch_pitfalls.lint.rules.shared.losses import _probabilities


def _log_of_probabilities(node, ctx) -> bool:
    """``torch.log(p)`` or ``p.log()`` where ``p`` holds softmax or sigmoid probabilities as they
    came out (``torch.log(p + eps)`` or ``p.clamp(min=eps).log()`` keep the log finite: not flagged)."""
    if _is_call_to(node, ctx, "torch.log") and len(node.args) == 1:
        inner = node.args[0]
    elif _method(node, "log", "log_") and not node.args and ctx.qualified(node.func) is None:
        inner = node.func.value
    else:
        return False
    return isinstance(inner, (ast.Call, ast.Name, ast.Attribute)) and _probabilities(inner, ctx) is not None


RULE = Rule(
    "PTF211",
    ("log-of-softmax-underflow",),
    "the log of softmax (or sigmoid) probabilities is -inf where a probability underflows to 0, and the "
    "loss or its gradient turns inf/NaN; use F.log_softmax(x, dim) (F.logsigmoid(x) for a sigmoid)",
    _log_of_probabilities,
    nodes=CALL,
)
