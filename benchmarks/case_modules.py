"""Shared by the benchmarks: a case module loaded by its id, as the harness loads it; the devices
a pair runs on; and how a benchmark names itself as one half of a broken/fixed pair."""

from pathlib import Path

import pytest
import torch

from torch_pitfalls.loader import load_cases

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


def pair(benchmark, case_id: str, device: str, variant: str, **measures):
    """Name this benchmark as the ``variant`` ("broken" or "fixed") half of ``case_id``'s pair on
    ``device``; ``summary.ratios`` divides the halves (and any ``peak_bytes`` measured)."""
    benchmark.extra_info.update(case=case_id, device=device, variant=variant, **measures)


def synchronized(fn, device: str):
    """``fn`` that, on CUDA, waits for the GPU before returning: each call is charged its GPU work."""
    if torch.device(device).type != "cuda":
        return fn

    def run(*args, **kwargs):
        out = fn(*args, **kwargs)
        torch.cuda.synchronize()
        return out

    return run
