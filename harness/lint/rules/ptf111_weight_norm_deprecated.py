"""What: torch.nn.utils.weight_norm outside a version guard.
Why: Deprecated since torch 2.1 (a warning).
Fix: use torch.nn.utils.parametrizations.weight_norm, guarded for older torch.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to

RULE = Rule(
    "PTF111",
    ("weight-norm-deprecated",),
    "torch.nn.utils.weight_norm is deprecated since torch 2.1; use "
    "torch.nn.utils.parametrizations.weight_norm (guarded for older torch)",
    lambda n, c: (
        _is_call_to(n, c, "torch.nn.utils.weight_norm", "torch.nn.utils.weight_norm.weight_norm") and not c.guarded
    ),
    nodes=CALL,
    calls=("weight_norm",),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
)
