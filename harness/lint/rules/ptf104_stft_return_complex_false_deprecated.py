"""What: stft(..., return_complex=False).
Why: Deprecated since torch 2.0 (a warning).
Fix: use return_complex=True, and torch.view_as_real where the real layout is needed.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _is_call_to, _kw, _method

RULE = Rule(
    "PTF104",
    ("stft-return-complex-false-deprecated",),
    "stft(return_complex=False) is deprecated since torch 2.0; use return_complex=True and torch.view_as_real",
    lambda n, c: (
        (_is_call_to(n, c, "torch.stft", "torch.functional.stft") or _method(n, "stft"))
        and _const(_kw(n, "return_complex"), False)
    ),
    nodes=CALL,
    calls=("stft",),
    upgrade=True,
    deliberate_warning=True,
)
