"""What: torch.load with pickle arguments (encoding=, errors=, fix_imports=) and no weights_only.
Why: Since torch 2.11 it warns that they only work with weights_only=False.
Fix: drop them, or pass weights_only=False for a file you trust.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to

RULE = Rule(
    "PTF129",
    ("torch-load-pickle-args-ignored",),
    "since torch 2.11 torch.load warns that pickle arguments (encoding=, ...) only work with "
    "weights_only=False; drop them, or pass weights_only=False for a file you trust",
    lambda n, c: (
        _is_call_to(n, c, "torch.load", "torch.serialization.load")
        and not _has_kw(n, "weights_only")
        and any(k.arg in ("encoding", "errors", "fix_imports") for k in n.keywords)
    ),
    nodes=CALL,
    calls=("load",),
    upgrade=True,
    deliberate_warning=True,
)
