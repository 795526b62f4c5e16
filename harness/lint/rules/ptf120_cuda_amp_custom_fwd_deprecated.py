"""What: torch.cuda.amp.custom_fwd / custom_bwd.
Why: Deprecated since torch 2.4 (a warning).
Fix: use torch.amp.custom_fwd(device_type='cuda'), behind hasattr(torch.amp, 'custom_fwd').
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF120",
    ("cuda-amp-custom-fwd-deprecated",),
    "torch.cuda.amp.custom_fwd/custom_bwd are deprecated since torch 2.4; use torch.amp.custom_fwd("
    "device_type='cuda') (guarded by hasattr(torch.amp, 'custom_fwd'))",
    lambda n, c: _use_of(
        n,
        c,
        "torch.cuda.amp.custom_fwd",
        "torch.cuda.amp.custom_bwd",
        "torch.cuda.amp.autocast_mode.custom_fwd",
        "torch.cuda.amp.autocast_mode.custom_bwd",
    ),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    needs=("custom_fwd", "custom_bwd"),
)
