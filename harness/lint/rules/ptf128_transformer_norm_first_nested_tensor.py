"""What: TransformerEncoder without enable_nested_tensor, in a file whose layers have norm_first=True.
Why: norm_first layers cannot use nested tensors, so the encoder warns.
Fix: pass enable_nested_tensor=False.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _has_kw, _is_call_to, _kw
from torch_pitfalls.lint.walking import walk


def _transformer_nested_with_norm_first(node, ctx) -> bool:
    if not (_is_call_to(node, ctx, "torch.nn.TransformerEncoder") and not _has_kw(node, "enable_nested_tensor")):
        return False
    return any(
        _is_call_to(n, ctx, "torch.nn.TransformerEncoderLayer") and _const(_kw(n, "norm_first"), True)
        for n in walk(ctx.module)
    )


RULE = Rule(
    "PTF128",
    ("transformer-norm-first-nested-tensor",),
    "TransformerEncoder with norm_first=True layers cannot use nested tensors and warns; pass "
    "enable_nested_tensor=False",
    _transformer_nested_with_norm_first,
    nodes=CALL,
    calls=("TransformerEncoder",),
    upgrade=True,
    deliberate_warning=True,
)
