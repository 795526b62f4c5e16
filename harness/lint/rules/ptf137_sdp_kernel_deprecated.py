"""What: torch.backends.cuda.sdp_kernel.
Why: Deprecated since torch 2.3 (FutureWarning).
Fix: use torch.nn.attention.sdpa_kernel([SDPBackend...]), with an ImportError fallback for torch 2.2 and
older.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF137",
    ("sdp-kernel-deprecated",),
    "torch.backends.cuda.sdp_kernel is deprecated since torch 2.3 (FutureWarning); use "
    "torch.nn.attention.sdpa_kernel([SDPBackend...]), with an ImportError fallback for torch 2.2 and older",
    lambda n, c: _use_of(n, c, "torch.backends.cuda.sdp_kernel"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    needs=("sdp_kernel",),
)
