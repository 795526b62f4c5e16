"""What: clip_grad_norm_ / clip_grad_value_ called after optimizer.step().
Why: The step has already used the gradients: no update is ever clipped.
Fix: clip between backward() and step().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to, _method, last_names
from torch_pitfalls.lint.rules.shared.flow import (
    _before,
    _dead,
    _exclusive,
    _own_calls,
    _own_code,
    context_at,
    helper_calls,
)
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step

_CLIPS = (
    "torch.nn.utils.clip_grad_norm_",
    "torch.nn.utils.clip_grad_value_",
    "torch.nn.utils.clip_grad.clip_grad_norm_",
    "torch.nn.utils.clip_grad.clip_grad_value_",
)


def _backward(call) -> bool:
    """``loss.backward()``, ``scaler.scale(loss).backward()``, ``accelerator.backward(loss)``,
    ``torch.autograd.backward(...)``: gradients are made."""
    return _method(call, "backward")


def _infinite(expr) -> bool:
    """``float('inf')``, ``math.inf``, ``np.inf``: a clip that only measures the norm."""
    text = ast.unparse(expr) if expr is not None else ""
    return "inf" in text.lower()


def _clip_after_step(node, ctx) -> bool:
    """``clip_grad_norm_``/``clip_grad_value_`` after ``optimizer.step()`` (or ``scaler.step(opt)``) and
    before the next backward, with no other step after it that it could be meant for: the step has
    already used the unclipped gradients, and they are zeroed before they are used again, so the
    clipping never changes an update. A clip that only measures (``max_norm=inf``) stays quiet. The
    fix: backward, clip, step (with AMP, ``scaler.unscale_(opt)`` before the clip)."""
    if not _is_call_to(node, ctx, *_CLIPS) or ctx.function is None or _infinite(_arg(node, 1, "max_norm")):
        return False
    if not _own_code(node, ctx) or _dead(node, ctx):
        return False
    events = _events(node, ctx)
    if events:
        return _after_a_step(node, events)
    # a hook of its own (``self.on_after_optimizer_step()``): read where the file calls it, at every call
    fn = ctx.function
    sites = helper_calls(fn, ctx) if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    callers = [(site, context_at(site, ctx)) for site in sites or ()]
    return bool(callers) and all(
        caller is not None and _after_a_step(site, _events(site, caller)) for site, caller in callers
    )


def _events(node, ctx) -> list:
    """The optimizer steps and backward passes of ``node``'s function that can run with it, in order."""
    calls = sorted(_own_calls(ctx, "step", "backward"), key=lambda n: (n.lineno, n.col_offset))
    events = [
        (c, "step" if _optimizer_step(c, ctx) else "backward") for c in calls if _optimizer_step(c, ctx) or _backward(c)
    ]
    return [(c, kind) for c, kind in events if not _exclusive(c, node, ctx.function)]


def _after_a_step(node, events) -> bool:
    """The last event before ``node`` is a step, and no step comes after it before the next backward."""
    before = [kind for c, kind in events if _before(c, node)]
    after = [kind for c, kind in events if _before(node, c)]
    return bool(before) and before[-1] == "step" and (not after or after[0] != "step")


RULE = Rule(
    "PTF208",
    ("clip-grad-after-step",),
    "clip_grad_norm_/clip_grad_value_ after optimizer.step() clips gradients the step has already used: "
    "no update is ever clipped; clip between backward() and step()",
    _clip_after_step,
    nodes=CALL,
    calls=last_names(*_CLIPS),
)
