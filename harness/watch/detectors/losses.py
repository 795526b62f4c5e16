"""Two pitfalls met at a loss call: a target that broadcasts against the prediction
(target-shape-broadcast), and a target that still requires grad (loss-target-requires-grad)."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torch_pitfalls.watch.detectors.base import Detector, arg

# Element-wise regression losses: they broadcast input against target, then reduce.
BROADCASTING = ("mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss", "soft_margin_loss")
# Losses whose target can be a float tensor, and so can carry a graph.
FLOAT_TARGET = (
    *BROADCASTING,
    "kl_div",
    "binary_cross_entropy",
    "binary_cross_entropy_with_logits",
    "cross_entropy",
    "poisson_nll_loss",
    "gaussian_nll_loss",
)


def _functions(names):
    return tuple(getattr(F, n) for n in names if hasattr(F, n))


def _input_and_target(args, kwargs):
    return arg(args, kwargs, 0, "input"), arg(args, kwargs, 1, "target")


class TargetShapeBroadcast(Detector):
    case = "target-shape-broadcast"
    message = (
        "the loss's input and target have different shapes and broadcast to a larger one, so the loss "
        "averages every input against every target; make the shapes equal (e.g. pred.squeeze(1))"
    )

    def functions(self):
        return _functions(BROADCASTING)

    def before(self, func, args, kwargs):
        x, y = _input_and_target(args, kwargs)
        if not (isinstance(x, torch.Tensor) and isinstance(y, torch.Tensor)) or x.shape == y.shape:
            return
        try:
            both = torch.broadcast_shapes(x.shape, y.shape)
        except RuntimeError:
            return  # torch refuses these shapes itself
        numel = 1
        for n in both:
            numel *= n
        if numel > max(x.numel(), y.numel()):
            self.report(
                f"{func.__name__}: input {tuple(x.shape)} and target {tuple(y.shape)} broadcast to {tuple(both)}"
            )


class LossTargetRequiresGrad(Detector):
    case = "loss-target-requires-grad"
    message = (
        "the loss's target requires grad, so backward trains whatever produced the target too; "
        "detach it (target.detach(), or compute it under torch.no_grad()) unless both sides are meant to learn"
    )

    def functions(self):
        return _functions(FLOAT_TARGET)

    def before(self, func, args, kwargs):
        x, y = _input_and_target(args, kwargs)
        if (
            isinstance(x, torch.Tensor)
            and isinstance(y, torch.Tensor)
            and torch.is_grad_enabled()
            and x.requires_grad
            and y.requires_grad
            and y.grad_fn is not None
        ):
            self.report(f"{func.__name__}: the target has grad_fn {type(y.grad_fn).__name__}")
