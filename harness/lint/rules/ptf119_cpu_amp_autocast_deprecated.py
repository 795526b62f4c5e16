"""What: torch.cpu.amp.autocast.
Why: Deprecated since torch 2.4 (a warning).
Fix: use torch.autocast('cpu', ...).
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _to_autocast
from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF119",
    ("cpu-amp-autocast-deprecated",),
    "torch.cpu.amp.autocast is deprecated since torch 2.4; use torch.autocast('cpu', ...)",
    lambda n, c: _use_of(n, c, "torch.cpu.amp.autocast", "torch.cpu.amp.autocast_mode.autocast"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix('torch.cpu.amp.autocast(...) -> torch.autocast("cpu", ...)', _to_autocast("cpu")),
    needs=("autocast",),
)
