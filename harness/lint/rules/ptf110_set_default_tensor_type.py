"""What: torch.set_default_tensor_type(...).
Why: Deprecated since torch 2.1 (a warning).
Fix: use torch.set_default_dtype (and torch.set_default_device).
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to

RULE = Rule(
    "PTF110",
    ("set-default-tensor-type",),
    "torch.set_default_tensor_type is deprecated since torch 2.1; use torch.set_default_dtype (and "
    "torch.set_default_device)",
    lambda n, c: _is_call_to(n, c, "torch.set_default_tensor_type"),
    nodes=CALL,
    calls=("set_default_tensor_type",),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
)
