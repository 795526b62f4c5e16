"""What: scatter / scatter_ with reduce= and a tensor src.
Why: Deprecated since torch 2.0 (a warning).
Fix: use scatter_add_, or scatter_reduce_(..., reduce='sum'|'prod'|'amax'|'amin'|'mean').
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _kw, _method, _receiver_may_be_tensor

RULE = Rule(
    "PTF109",
    ("scatter-reduce-argument",),
    "scatter's reduce= with a tensor src is deprecated since torch 2.0; use scatter_add_ or "
    "scatter_reduce_(..., reduce='sum'|'prod'|'amax'|'amin'|'mean')",
    lambda n, c: (
        _kw(n, "reduce") is not None
        and (
            _is_call_to(n, c, "torch.scatter") or (_method(n, "scatter", "scatter_") and _receiver_may_be_tensor(n, c))
        )
    ),
    nodes=CALL,
    calls=("scatter", "scatter_"),
    upgrade=True,
    deliberate_warning=True,
)
