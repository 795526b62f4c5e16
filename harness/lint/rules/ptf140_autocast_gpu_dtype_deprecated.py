"""What: torch.get_autocast_gpu_dtype().
Why: Deprecated since torch 2.4 (DeprecationWarning on every call).
Fix: use torch.get_autocast_dtype('cuda'), behind hasattr(torch, 'get_autocast_dtype') for torch 2.3 and
older.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF140",
    ("autocast-gpu-dtype-deprecated",),
    "torch.get_autocast_gpu_dtype() is deprecated since torch 2.4 (DeprecationWarning on every call); use "
    "torch.get_autocast_dtype('cuda'), behind hasattr(torch, 'get_autocast_dtype') for torch 2.3 and older",
    lambda n, c: _use_of(n, c, "torch.get_autocast_gpu_dtype"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    needs=("get_autocast_gpu_dtype",),
)
