"""What: torch.cuda.amp.GradScaler.
Why: Deprecated since torch 2.4 (a warning).
Fix: use torch.amp.GradScaler('cuda', ...), behind hasattr(torch.amp, 'GradScaler').
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Edit, Fix, Source, _add_argument, _call_of, _ref, _torch_chain
from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of


def _grad_scaler(src: Source, finding) -> list[Edit]:
    """``torch.cuda.amp.GradScaler(...)`` -> ``torch.amp.GradScaler("cuda", ...)`` (the device first)."""
    ref = _ref(src, finding, "GradScaler")
    torch = _torch_chain(src, ref, "cuda.amp.GradScaler")
    call = _call_of(src, ref)
    return [
        Edit(src.start(ref), src.end(ref), f"{torch}.amp.GradScaler"),
        _add_argument(src, call, '"cuda"', first=True),
    ]


RULE = Rule(
    "PTF121",
    ("cuda-amp-gradscaler-deprecated",),
    "torch.cuda.amp.GradScaler is deprecated since torch 2.4; use torch.amp.GradScaler('cuda', ...) "
    "(guarded by hasattr(torch.amp, 'GradScaler'))",
    lambda n, c: _use_of(n, c, "torch.cuda.amp.GradScaler", "torch.cuda.amp.grad_scaler.GradScaler"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix('torch.cuda.amp.GradScaler(...) -> torch.amp.GradScaler("cuda", ...)', _grad_scaler),
    needs=("GradScaler",),
)
