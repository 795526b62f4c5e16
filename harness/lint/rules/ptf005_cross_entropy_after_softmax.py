"""What: Softmax probabilities passed to cross_entropy / nn.CrossEntropyLoss.
Why: cross_entropy applies log-softmax itself: softmax outputs are squashed a second time, which
flattens the loss and its gradients.
Fix: pass the raw logits.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg
from torch_pitfalls.lint.rules.shared.losses import _loss_call, _probabilities


def _softmax_into_cross_entropy(node, ctx) -> bool:
    if not _loss_call(node, ctx, "cross_entropy", "torch.nn.CrossEntropyLoss"):
        return False
    return _probabilities(_arg(node, 0, "input"), ctx) is not None


RULE = Rule(
    "PTF005",
    ("cross-entropy-after-softmax",),
    "cross_entropy applies log-softmax itself: feeding it softmax outputs squashes the loss and its "
    "gradients; pass the raw logits",
    _softmax_into_cross_entropy,
    nodes=CALL,
    needs=("oftmax",),
)
