"""What: A uint8 (byte) tensor passed as attn_mask, src_mask, tgt_mask or memory_mask (shared/byte_masks.py).
Why: MultiheadAttention and the Transformer layers refuse it since torch 2.0 (AssertionError; a warning
before).
Fix: build the mask as bool (True = do not attend).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule
from torch_pitfalls.lint.rules.shared.byte_masks import byte_mask

ATTN_MASK_KWARGS = ("attn_mask", "src_mask", "tgt_mask", "memory_mask")


# torch's attention: the modules (a call of what the bindings prove one of them) and the functions
_ATTENTION_MODULES = (
    "MultiheadAttention",
    "Transformer",
    "TransformerEncoder",
    "TransformerEncoderLayer",
    "TransformerDecoder",
    "TransformerDecoderLayer",
)
_ATTENTION_FUNCTIONS = (
    "torch.nn.functional.multi_head_attention_forward",
    "torch.nn.functional.scaled_dot_product_attention",
)


def _torch_attention(call, ctx):
    """True where the call is torch's attention (a module the bindings prove one, or its function), False where
    it is known to be something else (a function or class of the file, another library's), UNSURE otherwise."""
    func = call.func.value if isinstance(call.func, ast.Attribute) and call.func.attr == "forward" else call.func
    q = ctx.qualified(func)
    if q is not None:
        return q in _ATTENTION_FUNCTIONS or (q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in _ATTENTION_MODULES)
    held = ctx.held(func)
    if held is None:
        return UNSURE
    what = held.what or ""
    return held.kind == "module" and what.startswith("torch.nn.") and what.rsplit(".", 1)[-1] in _ATTENTION_MODULES


def _byte_attention_mask(node, ctx):
    """A byte mask handed to torch's attention (an attention class of the file or of another library, such as
    joeynmt's, may take one: quiet; an object of unknown type: --preview)."""
    if not (
        isinstance(node, ast.Call)
        and any(k.arg in ATTN_MASK_KWARGS and byte_mask(k.value, ctx, node.lineno) for k in node.keywords)
    ):
        return False
    return _torch_attention(node, ctx)


RULE = Rule(
    "PTF131",
    ("mha-uint8-attn-mask",),
    "a byte (uint8) attention mask is refused by MultiheadAttention and the Transformer layers since torch "
    "2.0 (AssertionError; a deprecation warning before); build the mask as bool (True = do not attend)",
    _byte_attention_mask,
    nodes=CALL,
    upgrade=True,
)
