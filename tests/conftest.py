"""Fixtures of the harness's own tests."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

from planting import ROOT, Corpus, copy_corpus, plant_rng_probes, run_pytest

pytest_plugins = ["pytester"]


@pytest.fixture
def corpus(tmp_path) -> Corpus:
    return Corpus(tmp_path)


@pytest.fixture
def planted(pytester, monkeypatch) -> Corpus:
    """A corpus inside pytester's directory, run with ``pytester.runpytest_subprocess``."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return Corpus(pytester.path)


@dataclass
class PlainRun:
    """One plain pytest run of a temp copy of the real corpus, what other runs are compared with."""

    root: Path
    args: tuple[str, ...]
    proc: subprocess.CompletedProcess
    report: dict
    probes: list[str]


@pytest.fixture(scope="session")
def plain_run(tmp_path_factory) -> PlainRun:
    """The real corpus, with RNG probes and an RNG-moving test beside it (run first), by plain
    pytest. The order and parallel runs reuse its folder; the fault runs compare with it."""
    from harness.report import load_report

    root = tmp_path_factory.mktemp("plain-corpus")
    probes = plant_rng_probes(copy_corpus(root))
    args = ("test_moves_rng.py", "cases")
    proc = run_pytest(root, *args, "--pitfalls-json", "plain.json")
    assert (root / "plain.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return PlainRun(root, args, proc, load_report(root / "plain.json"), probes)
