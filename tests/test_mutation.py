"""A fix that behaves like the broken code never passes.

Every case is copied with ``fixed`` replaced by a call to ``broken`` (as the catalogue's
mutation check does) and run on every device this machine has: no copy may come out as a pass
(``reproduced`` or ``absent``). Each one must be ``fix-failed`` (the harness saw the symptom in
the "fix", or the fix's check refused it) or ``unverified`` (nothing here tells them apart).
"""
from __future__ import annotations

import shutil

import pytest

from harness.loader import load_corpus
from harness.report import PASSING
from harness.runner import run_case
from harness.versions import device_unavailable_reason
from planting import ROOT

MUTANT = "\n\ndef fixed(device):  # mutation: the fix is the broken code\n    return broken(device)\n"


@pytest.fixture(scope="module")
def mutants(tmp_path_factory):
    root = tmp_path_factory.mktemp("mutants") / "cases"
    shutil.copytree(ROOT / "cases", root)
    for path in root.glob("*/*.py"):
        path.write_text(path.read_text() + MUTANT)
    loaded, errors = load_corpus(root)
    assert not errors, errors
    return loaded


def test_no_case_passes_with_its_fix_replaced_by_the_broken_code(mutants):
    devices = [d for d in ("cpu", "cuda") if device_unavailable_reason(d) is None]
    passing = []
    for lc in mutants:
        for device in devices:
            record = run_case(lc, device)
            if record.outcome in PASSING:
                passing.append(f"{lc.id} [{device}] {record.outcome}")
    assert len(mutants) >= 65
    assert not passing, f"{len(passing)} mutants pass: " + "; ".join(passing)
