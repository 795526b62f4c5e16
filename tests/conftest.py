"""Fixtures of the harness's own tests."""
from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

import sys

from planting import ROOT, Corpus, copy_corpus, plant_rng_probes, real_case_ids, run_pytest, subprocess_env

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
    """One pytest run of a temp copy of the real corpus with RNG probes beside it."""

    root: Path
    args: tuple[str, ...]
    proc: subprocess.CompletedProcess
    report: dict
    probes: list[str]


@pytest.fixture(scope="session")
def clean_records(request, tmp_path_factory) -> dict:
    """The real corpus's records from a plain run, (case, device) -> record dict: what every
    other run is compared with. ``make test`` runs ``cases/`` before ``tests/`` in one session,
    so that run is reused (the plugin keeps its records); run alone, ``tests/`` makes one."""
    from dataclasses import asdict

    from harness.plugin import records_key
    from harness.report import load_report

    real = real_case_ids()
    mine = {(r.case, r.device): asdict(r) for r in request.config.stash.get(records_key, []) if r.case in real}
    if {case for case, _ in mine} == real and len(mine) == len(real) * 2:
        return mine
    out = tmp_path_factory.mktemp("clean-run") / "clean.json"
    cmd = [sys.executable, "-m", "harness", "--cases", str(ROOT / "cases"), "run", "-q", "--json", str(out)]
    proc = subprocess.run(cmd, cwd=out.parent, env=subprocess_env(), capture_output=True, text=True, timeout=1200)
    assert out.exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    return {(r["case"], r["device"]): r for r in load_report(out)["records"] if r["case"] in real}


@pytest.fixture(scope="session")
def random_run(tmp_path_factory) -> PlainRun:
    """The whole real corpus, RNG probes and an RNG-moving test beside it, in a random order
    (a new seed each session, printed to replay it)."""
    import random

    from harness.report import load_report

    root = tmp_path_factory.mktemp("random-corpus")
    probes = plant_rng_probes(copy_corpus(root))
    seed = random.SystemRandom().randrange(2**31)
    print(f"random order: --random-order-bucket=global --random-order-seed={seed}")
    args = ("test_moves_rng.py", "cases", "--random-order-bucket=global", f"--random-order-seed={seed}")
    proc = run_pytest(root, *args, "--pitfalls-json", "random.json")
    assert (root / "random.json").exists(), proc.stdout[-3000:] + proc.stderr[-3000:]
    assert f"--random-order-seed={seed}" in proc.stdout  # the plugin did shuffle, with this seed
    return PlainRun(root, args, proc, load_report(root / "random.json"), probes)
