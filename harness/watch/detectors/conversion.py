"""uint8-conversion-wraparound: a float tensor cast to uint8 keeps the low 8 bits of values
outside 0..255 (256.02 becomes 0, -1.02 becomes 255)."""

from __future__ import annotations

import torch

from torch_pitfalls.watch.detectors.base import Detector

_UINT8_NAMES = ("torch.ByteTensor", "torch.cuda.ByteTensor")


def _asks_uint8(args, kwargs) -> bool:
    for a in (*args[1:], kwargs.get("dtype")):
        if a is torch.uint8 or (isinstance(a, str) and a in _UINT8_NAMES):
            return True
        if isinstance(a, torch.Tensor) and a.dtype == torch.uint8:  # x.to(other): other's dtype
            return True
        if isinstance(a, type) and getattr(a, "dtype", None) == torch.uint8:  # x.type(torch.ByteTensor)
            return True
    return False


class Uint8ConversionWraparound(Detector):
    case = "uint8-conversion-wraparound"
    message = (
        "a float tensor with values outside 0..255 is cast to uint8, which wraps around (256 -> 0, "
        "-1 -> 255) instead of saturating; clamp to 0..255 first (x.clamp(0, 255).byte())"
    )

    def functions(self):
        return (torch.Tensor.byte, torch.Tensor.to, torch.Tensor.type)

    def before(self, func, args, kwargs):
        x = args[0] if args else None
        if not isinstance(x, torch.Tensor) or not x.is_floating_point() or x.numel() == 0:
            return
        if func is not torch.Tensor.byte and not _asks_uint8(args, kwargs):
            return
        values = x.detach()
        wraps = (values <= -1) | (values >= 256)  # what truncation toward zero cannot keep in 0..255
        if bool(wraps.any()):
            self.report(
                f"{int(wraps.sum())} of {x.numel()} values outside 0..255 "
                f"(min {values.min().item():.4g}, max {values.max().item():.4g})"
            )
