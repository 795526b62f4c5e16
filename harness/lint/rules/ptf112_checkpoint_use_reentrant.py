"""What: torch.utils.checkpoint (or checkpoint_sequential) without use_reentrant.
Why: It warns since torch 2.1: the default is to change.
Fix: pass use_reentrant=False (or True, to keep what it did).
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _add_keyword
from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to

RULE = Rule(
    "PTF112",
    ("checkpoint-use-reentrant",),
    "torch.utils.checkpoint without use_reentrant warns since torch 2.1 (the default is to change); pass "
    "use_reentrant=False",
    lambda n, c: (
        _is_call_to(n, c, "torch.utils.checkpoint.checkpoint", "torch.utils.checkpoint.checkpoint_sequential")
        and not _has_kw(n, "use_reentrant")
    ),
    nodes=CALL,
    calls=("checkpoint", "checkpoint_sequential"),
    upgrade=True,
    deliberate_warning=True,
    fix=Fix(
        "checkpoint(f, x) -> checkpoint(f, x, use_reentrant=True) (what it did when not passed)",
        _add_keyword(
            ("checkpoint", "checkpoint_sequential"),
            "use_reentrant=True",
            lambda c: not any(k.arg in ("use_reentrant", None) for k in c.keywords),
        ),
    ),
)
