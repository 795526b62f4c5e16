"""The about page's summary of what was observed speaks of the devices the reports hold, whatever
a contributed column is named (``cuda:<model>``)."""

from __future__ import annotations

from planting import ROOT

from docs.site.home_page import _evidence_summary
from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import load_matrix


def test_a_contributed_cuda_column_is_named_as_observed():
    cases = load_cases(ROOT / "cases")
    matrix = load_matrix(ROOT / "reports", ROOT / "cases")
    gpus = [d for d in matrix.devices if d.startswith("cuda:")]
    assert gpus, matrix.devices  # the H200 run (reports/torch-2.11.0-cuda-nvidia-h200.json)
    text = _evidence_summary(cases, matrix)
    assert f"CUDA is observed on {', '.join(gpus)}" in text and "no CUDA report" not in text
    matrix.devices[:] = ["cpu"]  # the same reports without it
    assert "no CUDA report is recorded" in _evidence_summary(cases, matrix)
