"""What: the log taken of softmax (or sigmoid) probabilities: torch.log(F.softmax(x, dim)).
Why: A probability that underflows to 0 in float32 (a logit ~100 below the largest) has a log of
-inf, and the loss or its gradient becomes inf or NaN; log_softmax computes the same values from the
logits without ever forming the tiny probability.
Fix: F.log_softmax(x, dim) (F.logsigmoid(x) for a sigmoid).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _is_call_to, _method
from torch_pitfalls.lint.rules.shared.losses import _probabilities


def _shifted_toward_one(inner, ctx) -> bool:
    """``sigmoid(h + 2)``: a scale built to start near 1 (Glow's and RealNVP's affine couplings). Its log
    is -inf only for ``h`` below about -90, where the coupling has already scaled its input to 0: the
    log is not what breaks there."""
    made = ctx.resolve(inner, getattr(inner, "lineno", 1 << 30)) if isinstance(inner, ast.Name) else inner
    if _called_name(made) != "sigmoid":
        return False
    x = made.args[0] if made.args else made.func.value if isinstance(made.func, ast.Attribute) else None
    return (
        isinstance(x, ast.BinOp)
        and isinstance(x.op, ast.Add)
        and any(
            isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) and v.value > 0 for v in (x.left, x.right)
        )
    )


def _log_of_probabilities(node, ctx) -> bool:
    """``torch.log(p)`` or ``p.log()`` where ``p`` holds softmax or sigmoid probabilities as they
    came out (``torch.log(p + eps)`` or ``p.clamp(min=eps).log()`` keep the log finite: not flagged)."""
    if _is_call_to(node, ctx, "torch.log") and len(node.args) == 1:
        inner = node.args[0]
    elif _method(node, "log", "log_") and not node.args and not node.keywords and ctx.qualified(node.func) is None:
        # Tensor.log takes no argument: ``p.log(input_in_01=True)`` is another library's tensor (CrypTen's)
        inner = node.func.value
    else:
        return False
    return (
        isinstance(inner, (ast.Call, ast.Name, ast.Attribute))
        and _probabilities(inner, ctx) is not None
        and not _shifted_toward_one(inner, ctx)
    )


RULE = Rule(
    "PTF211",
    ("log-of-softmax-underflow",),
    "the log of softmax (or sigmoid) probabilities is -inf where a probability underflows to 0, and the "
    "loss or its gradient turns inf/NaN; use F.log_softmax(x, dim) (F.logsigmoid(x) for a sigmoid)",
    _log_of_probabilities,
    nodes=CALL,
    calls=("log", "log_"),
    needs=("oftmax", "igmoid"),
)
