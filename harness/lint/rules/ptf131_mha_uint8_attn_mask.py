"""What: A uint8 (byte) tensor passed as attn_mask, src_mask, tgt_mask or memory_mask.
Why: MultiheadAttention and the Transformer layers refuse it since torch 2.0 (AssertionError; a warning
before).
Fix: build the mask as bool (True = do not attend).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _kw, _method

ATTN_MASK_KWARGS = ("attn_mask", "src_mask", "tgt_mask", "memory_mask")


def _byte_tensor(node, ctx) -> bool:
    """An expression that makes a uint8 tensor: ``m.byte()``, ``m.to(torch.uint8)``, ``m.type(torch.uint8)``,
    a factory with ``dtype=torch.uint8``, ``torch.ByteTensor(...)``."""
    if not isinstance(node, ast.Call):
        return False
    if _method(node, "byte") and not node.args:
        return True
    dtype = _kw(node, "dtype") or (node.args[0] if _method(node, "to", "type") and node.args else None)
    return getattr(dtype, "attr", None) == "uint8" or ctx.qualified(node.func) == "torch.ByteTensor"


def _byte_attention_mask(node, ctx) -> bool:
    return isinstance(node, ast.Call) and any(
        k.arg in ATTN_MASK_KWARGS and _byte_tensor(ctx.resolve(k.value, node.lineno), ctx) for k in node.keywords
    )


RULE = Rule(
    "PTF131",
    ("mha-uint8-attn-mask",),
    "a byte (uint8) attention mask is refused by MultiheadAttention and the Transformer layers since torch "
    "2.0 (AssertionError; a deprecation warning before); build the mask as bool (True = do not attend)",
    _byte_attention_mask,
    nodes=CALL,
    upgrade=True,
)
