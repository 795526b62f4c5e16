"""Shared by the benchmarks: a case module loaded by its id, as the harness loads it."""
from pathlib import Path

import pytest
import torch

from harness.loader import load_cases

ROOT = Path(__file__).resolve().parent.parent
_CASES = {lc.id: lc for lc in load_cases(ROOT / "cases")}


def case_module(case_id: str):
    """The module of case ``case_id``, whose broken/fixed code the benchmark pair times."""
    return _CASES[case_id].module


# Every device a benchmark pair runs on; CUDA is skipped with the reason where there is none.
DEVICES = [
    "cpu",
    pytest.param(
        "cuda",
        marks=pytest.mark.skipif(
            not torch.cuda.is_available(),
            reason=f"CUDA not available (torch {torch.__version__}, CUDA {torch.version.cuda})",
        ),
    ),
]
