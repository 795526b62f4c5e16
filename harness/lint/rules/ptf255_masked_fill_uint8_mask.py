"""What: masked_fill / masked_fill_ / masked_scatter / masked_select given a uint8 (byte) mask: one
made with .byte(), .to(torch.uint8), dtype=torch.uint8 or torch.ByteTensor.
Why: Byte masks were deprecated when torch.bool arrived (1.2) and only warned through 2.0; from 2.1
the masked ops refuse them: RuntimeError "masked_fill_ only supports boolean masks, but got mask with
dtype unsigned char". (Indexing with a byte mask, x[mask], still only warns.)
Fix: build the mask as bool (dtype=torch.bool, a comparison) or convert it with .bool().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _method
from torch_pitfalls.lint.rules.shared.byte_masks import byte_mask

_MASKED = ("masked_fill", "masked_fill_", "masked_scatter", "masked_scatter_", "masked_select")


def _masked_with_bytes(node, ctx) -> bool:
    if _method(node, *_MASKED) and ctx.qualified(node.func) is None:
        mask = _arg(node, 0, "mask")
    elif isinstance(node, ast.Call) and ctx.qualified(node.func) in (
        "torch.masked_select",
        "torch.masked_fill",
        "torch.masked_scatter",
    ):
        mask = _arg(node, 1, "mask")
    else:
        return False
    return mask is not None and byte_mask(mask, ctx, node.lineno)


RULE = Rule(
    "PTF255",
    ("masked-fill-uint8-mask",),
    "masked_fill (masked_select, masked_scatter) with a uint8 mask raises from torch 2.1 (RuntimeError: "
    "only supports boolean masks; a deprecation warning before); build the mask as bool or convert it with .bool()",
    _masked_with_bytes,
    nodes=CALL,
    calls=_MASKED,
    needs=("masked_",),
)
