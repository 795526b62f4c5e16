"""What: torch.stft without return_complex.
Why: On a real signal a RuntimeError since torch 2.0 (a warning before).
Fix: pass return_complex=True, and torch.view_as_real(...) where the old (..., 2) layout is needed.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Source, _add_argument, _one
from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to


def _stft_without_return_complex(node, ctx) -> bool:
    """``torch.stft(x, n_fft, ...)`` with no ``return_complex`` (the tenth parameter): on a real signal
    a RuntimeError since 2.0. Only the qualified function: a method named ``stft`` may be anyone's."""
    return (
        _is_call_to(node, ctx, "torch.stft", "torch.functional.stft")
        and len(node.args) < 10
        and not _has_kw(node, "return_complex")
    )


def _stft_complex(src: Source, finding) -> list[Edit]:
    """``torch.stft(...)`` -> ``torch.view_as_real(torch.stft(..., return_complex=True))``: the
    (..., 2) real layout the call returned before torch 2.0, from the complex result."""
    call = _one(
        [
            c
            for c in src.at(finding, ast.Call)
            if getattr(c.func, "attr", getattr(c.func, "id", None)) == "stft"
            and not any(k.arg == "return_complex" for k in c.keywords)
        ],
        "stft call without return_complex",
    )
    start, end = src.start(call), src.end(call)
    return [
        Edit(start, start, f"{src.torch_name()}.view_as_real("),
        _add_argument(src, call, "return_complex=True"),
        Edit(end, end, ")"),
    ]


RULE = Rule(
    "PTF130",
    ("stft-without-return-complex",),
    "torch.stft on a real signal without return_complex raises a RuntimeError since torch 2.0 (a warning "
    "before); pass return_complex=True, and torch.view_as_real(...) where the old (..., 2) layout is needed",
    _stft_without_return_complex,
    nodes=CALL,
    calls=("stft",),
    upgrade=True,
    fix=Fix(
        "torch.stft(...) -> torch.view_as_real(torch.stft(..., return_complex=True)) (the same real layout)",
        _stft_complex,
    ),
)
