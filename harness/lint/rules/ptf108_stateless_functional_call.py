"""What: torch.nn.utils.stateless.functional_call.
Why: Deprecated since torch 2.0 (a warning).
Fix: use torch.func.functional_call, with an ImportError fallback for torch 1.13.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

RULE = Rule(
    "PTF108",
    ("stateless-functional-call",),
    "torch.nn.utils.stateless.functional_call is deprecated since torch 2.0; use "
    "torch.func.functional_call (with an ImportError fallback for 1.13)",
    lambda n, c: _use_of(n, c, "torch.nn.utils.stateless.functional_call"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    needs=("functional_call",),
)
