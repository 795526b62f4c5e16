"""What: torch.cuda.amp.autocast.
Why: Deprecated since torch 2.4: a FutureWarning, even disabled or without a GPU.
Fix: use torch.autocast('cuda', ...), which takes the same arguments on every torch 2.x.
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _to_autocast
from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF136",
    ("cuda-amp-autocast-deprecated",),
    "torch.cuda.amp.autocast is deprecated since torch 2.4 (FutureWarning, even disabled or without a GPU); "
    "use torch.autocast('cuda', ...), which takes the same arguments on every torch 2.x",
    lambda n, c: _use_of(n, c, "torch.cuda.amp.autocast", "torch.cuda.amp.autocast_mode.autocast"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix('torch.cuda.amp.autocast(...) -> torch.autocast("cuda", ...)', _to_autocast("cuda")),
    needs=("autocast",),
)
