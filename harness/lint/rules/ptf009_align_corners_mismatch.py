"""What: interpolate with a linear mode and no align_corners, where the same function or file resizes with
align_corners=True.
Why: Left out, align_corners is False: training and inference resize differently and the pixels shift.
Fix: pass align_corners explicitly, the same way everywhere.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _const, _is_call_to, last_names
from torch_pitfalls.lint.walking import walk

INTERP = ("torch.nn.functional.interpolate", "torch.nn.functional.upsample", "torch.nn.Upsample")


_LINEAR_MODES = ("linear", "bilinear", "bicubic", "trilinear")


def _resize_mode(call, ctx):
    """(mode, align_corners) of an interpolate/upsample call, by keyword or position."""
    q = ctx.qualified(call.func)
    mode_at = 2 if q == "torch.nn.Upsample" else 3
    return _arg(call, mode_at, "mode"), _arg(call, mode_at + 1, "align_corners")


def _interpolate_without_align_corners(node, ctx) -> bool:
    """A linear-mode resize left at the default beside one with ``align_corners=True`` in the same
    function, or in another function of the file in the same mode (training and prediction): the two
    disagree when they make the same resize (mode and size). A resize at the default on its own is the
    default on purpose (most models were trained with it)."""
    if not _is_call_to(node, ctx, *INTERP):
        return False
    mode, corners = _resize_mode(node, ctx)
    if not (
        isinstance(mode, ast.Constant)
        and mode.value in _LINEAR_MODES
        and corners is None
        and not any(k.arg is None for k in node.keywords)
    ):
        return False
    here = _resize_target(node, ctx)
    # in the same function, a resize with align_corners=True to another target written out is another resize
    # (the input downsampled at the default, the predicted flow upsampled back to the original shape, alike in
    # training and inference: LapIRN); to the same target, or one not written out, the same resize done two ways
    if any(
        _is_call_to(n, ctx, *INTERP)
        and _const(_resize_mode(n, ctx)[1], True)
        and (here is None or _resize_target(n, ctx) in (None, here))
        for n in walk(ctx.function)
    ):
        return True
    # another function of the file (train vs predict) makes the same resize (mode and target size or
    # scale) with align_corners=True
    return here is not None and any(
        _is_call_to(n, ctx, *INTERP)
        and _const(_resize_mode(n, ctx)[1], True)
        and _resize_target(n, ctx) == here
        and isinstance(_resize_mode(n, ctx)[0], ast.Constant)
        and _resize_mode(n, ctx)[0].value == mode.value
        for n in walk(ctx.module)
    )


def _resize_target(call, ctx) -> str | None:
    """The size or scale a resize aims at, as written (``(224, 224)``), or None."""
    at = 0 if ctx.qualified(call.func) == "torch.nn.Upsample" else 1  # Upsample(size, scale_factor, ...)
    target = _arg(call, at, "size")
    if target is None or _const(target, None):  # interpolate(x, None, 2, ...): the scale is the target
        target = _arg(call, at + 1, "scale_factor")
    return ast.unparse(target) if target is not None else None


RULE = Rule(
    "PTF009",
    ("align-corners-mismatch",),
    "interpolate with a linear mode and no align_corners uses align_corners=False, where the same function "
    "(or the same resize elsewhere in the file) uses align_corners=True: resize the same way in training and "
    "inference (pass it explicitly)",
    _interpolate_without_align_corners,
    nodes=CALL,
    calls=last_names(*INTERP),
)
