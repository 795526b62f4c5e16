"""What: torch.ao.quantization's eager and FX entry points (quantize_dynamic, prepare, convert, prepare_fx,
...).
Why: Deprecated since torch 2.8 (DeprecationWarning).
Fix: migrate to torchao, or store int8 weights with plain tensor arithmetic.
"""

from __future__ import annotations

from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of

AO_QUANTIZATION = tuple(
    f"{m}.{f}"
    for m in (
        "torch.ao.quantization",
        "torch.quantization",
        "torch.ao.quantization.quantize",
        "torch.quantization.quantize",
    )
    for f in ("quantize_dynamic", "quantize", "quantize_qat", "prepare", "prepare_qat", "convert")
) + tuple(
    f"{m}.{f}"
    for m in ("torch.ao.quantization.quantize_fx", "torch.quantization.quantize_fx")
    for f in ("prepare_fx", "prepare_qat_fx", "convert_fx")
)


RULE = Rule(
    "PTF134",
    ("ao-quantization-deprecated",),
    "torch.ao.quantization's eager and FX entry points are deprecated since torch 2.8 (DeprecationWarning); "
    "migrate to torchao, or store int8 weights with plain tensor arithmetic",
    lambda n, c: _use_of(n, c, *AO_QUANTIZATION),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    needs=("quantization",),
)
