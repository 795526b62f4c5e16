"""A fix that behaves like the broken code never passes.

Every case is copied with ``fixed`` replaced by a call to ``broken`` (as the catalogue's
mutation check does) and run by ``pitfalls run`` on every device this machine has (the
``mutants`` run of ``background``): no copy may come out as a pass (``reproduced`` or
``absent``). Each one must be ``fix-failed`` (the harness saw the symptom in the "fix", or the
fix's check refused it) or ``unverified`` (nothing here tells them apart).
"""
from __future__ import annotations

from harness.report import PASSING
from planting import real_case_ids


def test_no_case_passes_with_its_fix_replaced_by_the_broken_code(mutant_report):
    records = mutant_report["records"]
    assert {r["case"] for r in records} == real_case_ids()  # every case, none failed to load
    passing = [f"{r['case']} [{r['device']}] {r['outcome']}" for r in records if r["outcome"] in PASSING]
    assert not passing, f"{len(passing)} mutants pass: " + "; ".join(passing)
    ran = [r for r in records if r["outcome"] not in ("skipped",)]
    assert len(ran) >= len(real_case_ids())  # every case ran on cpu at least
