"""What: kl_div / nn.KLDivLoss given probabilities or raw data as its input.
Why: Its input must be log-probabilities; given probabilities it computes a wrong divergence, with no
error.
Fix: pass log_softmax (or .log()) of the prediction.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _const, _kw
from torch_pitfalls.lint.rules.shared.losses import _loss_call, _probabilities
from torch_pitfalls.lint.rules.shared.tensors import _RAW_DATA


def _kl_div_on_probabilities(node, ctx) -> bool:
    """kl_div's input is probabilities or raw data (softmax, sigmoid, torch.tensor(...)), not log-probs."""
    if not _loss_call(node, ctx, "kl_div", "torch.nn.KLDivLoss") or _const(_kw(node, "log_target"), True):
        return False
    first = _arg(node, 0, "input")
    if _probabilities(first, ctx):
        return True
    held = ctx.held(first) if first is not None else None
    return held is not None and held.kind == "tensor" and held.what in _RAW_DATA


RULE = Rule(
    "PTF006",
    ("kldiv-expects-log-input",),
    "kl_div/KLDivLoss expect log-probabilities as input; pass log_softmax (or .log()) of the prediction",
    _kl_div_on_probabilities,
    nodes=CALL,
    needs=("kl_div", "KLDivLoss"),
)
