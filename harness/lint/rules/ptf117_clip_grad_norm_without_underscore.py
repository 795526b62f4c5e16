"""What: torch.nn.utils.clip_grad_norm (no trailing underscore).
Why: A deprecated alias (FutureWarning since torch 2.4).
Fix: call clip_grad_norm_.
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _rename_called_method
from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to

RULE = Rule(
    "PTF117",
    ("clip-grad-norm-without-underscore",),
    "torch.nn.utils.clip_grad_norm is a deprecated alias (FutureWarning since torch 2.4); call clip_grad_norm_",
    lambda n, c: _is_call_to(n, c, "torch.nn.utils.clip_grad_norm", "torch.nn.utils.clip_grad.clip_grad_norm"),
    nodes=CALL,
    calls=("clip_grad_norm",),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix(
        "clip_grad_norm(...) -> clip_grad_norm_(...)",
        _rename_called_method({"clip_grad_norm"}, lambda name: "clip_grad_norm_"),
    ),
)
