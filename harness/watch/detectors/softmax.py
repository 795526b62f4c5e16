"""softmax-singleton-axis: a softmax over an axis of size 1 is 1.0 everywhere, with gradient 0."""

from __future__ import annotations

import torch
import torch.nn.functional as F

from torch_pitfalls.watch.detectors.base import Detector, arg


def implicit_dim(ndim: int) -> int:
    # F.softmax without dim picks one by the number of dims (F._get_softmax_dim)
    return 0 if ndim in (0, 1, 3) else 1


class SoftmaxSingletonAxis(Detector):
    case = "softmax-singleton-axis"
    message = (
        "softmax over an axis of size 1: every output is exactly 1.0 and no gradient flows back; "
        "take the softmax over the axis that holds the alternatives (e.g. flatten H×W first)"
    )

    def functions(self):
        return (
            F.softmax,
            F.log_softmax,
            torch.softmax,
            torch.log_softmax,
            torch.Tensor.softmax,
            torch.Tensor.log_softmax,
        )

    def before(self, func, args, kwargs):
        x = arg(args, kwargs, 0, "input")
        if not isinstance(x, torch.Tensor) or x.dim() == 0 or x.numel() == 0:
            return
        # Only on a differentiable path: there the branch is really switched off. Inference over
        # a single alternative (an attention step with one key) is left alone.
        if not (x.requires_grad and torch.is_grad_enabled()):
            return
        dim = arg(args, kwargs, 1, "dim")
        dim = implicit_dim(x.dim()) if dim is None else dim
        if isinstance(dim, int) and -x.dim() <= dim < x.dim() and x.shape[dim] == 1:
            self.report(f"dim={dim} of a tensor of shape {tuple(x.shape)}")
