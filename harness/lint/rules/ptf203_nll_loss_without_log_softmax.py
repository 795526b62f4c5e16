"""What: Softmax probabilities, or a Linear layer's raw scores, passed to NLLLoss / nll_loss.
Why: nll_loss takes no logarithm: it returns minus its input at the target, a negative loss (minus the
probability, with vanishing gradients, or minus a raw score, unbounded below).
Fix: feed it log_softmax, or use cross_entropy on the logits.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LINEAR, Held
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _dead
from torch_pitfalls.lint.rules.shared.losses import _loss_call, _probabilities
from torch_pitfalls.lint.walking import walk


def _used_as_loss(call, ctx) -> bool:
    """The loss values are reduced or differentiated: the call (or the name it is bound to) is
    ``.backward()``-ed, ``.mean()``-ed or ``.sum()``-ed."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr in ("backward", "mean", "sum"):
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    return any(
        _method(n, "backward", "mean", "sum") and getattr(n.func.value, "id", None) == name for n in walk(ctx.function)
    )


def _nll_on_softmax(node, ctx) -> bool:
    """nll_loss / NLLLoss given softmax probabilities (``F.nll_loss(F.softmax(x, 1), y)``, an
    ``nn.Softmax`` output layer): NLLLoss takes no logarithm, it returns ``-input[target]``, so the loss
    is minus the probability, between -1 and 0, and its gradient is nearly zero where the model is
    confidently wrong. ``reduction='none'`` whose values are never reduced nor differentiated is the
    gather idiom (``1 - p`` as a focal weight) and stays quiet. The fix: log_softmax (or
    cross_entropy on the logits)."""
    if not _loss_call(node, ctx, "nll_loss", "torch.nn.NLLLoss", "torch.nn.NLLLoss2d"):
        return False
    given = _arg(node, 0, "input")
    raw = given is not None and (ctx.held(given) or Held("")).what == LINEAR
    if (_probabilities(given, ctx) != "softmax" and not raw) or _dead(node, ctx):
        return False
    if _const(_kw(node, "reduction"), "none"):
        return _used_as_loss(node, ctx)
    return True


RULE = Rule(
    "PTF203",
    ("nll-loss-without-log-softmax",),
    "NLLLoss/nll_loss takes no logarithm: given softmax probabilities or raw scores it returns minus its "
    "input at the target (a negative loss, vanishing or unbounded gradients); feed it log_softmax, or use "
    "cross_entropy on the logits",
    _nll_on_softmax,
    nodes=CALL,
    needs=("nll_loss", "NLLLoss"),
)
