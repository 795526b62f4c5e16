"""A fix that behaves like the broken code never passes.

Every case is copied with ``fixed`` replaced by a call to ``broken`` (as the catalogue's
mutation check does) and run by ``pitfalls run`` on every device this machine has (the
``mutants`` run of ``background``): no copy may come out as a pass (``reproduced`` or
``absent``). Each one must be ``fix-failed`` (the harness saw the symptom in the "fix", or the
fix's check refused it) or ``unverified`` (nothing here tells them apart).

One exception, by construction: an upgrade case on a release outside the range the matrix
brackets (before its change, or after it ended), where the broken code is the right spelling and
nothing can tell it from the fix. Its mutant is ``absent`` there; it is allowed only when the
recorded matrix proves the case's fix where the symptom shows (a fresh ``reproduced`` cell).
"""

from __future__ import annotations

from planting import ROOT, real_case_ids

from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import load_matrix
from torch_pitfalls.run.report import PASSING


def proven_elsewhere(record: dict, torch_version: str, cases: dict, matrix) -> bool:
    case = cases[record["case"]].case
    if record["outcome"] != "absent" or not case.outside_observed_change(torch_version, record["device"]):
        return False
    return any(cell.status == "reproduced" for cell in matrix.row(record["case"], record["device"]))


def test_no_case_passes_with_its_fix_replaced_by_the_broken_code(mutant_report):
    records = mutant_report["records"]
    assert {r["case"] for r in records} == real_case_ids()  # every case, none failed to load
    cases = {lc.id: lc for lc in load_cases(ROOT / "cases")}
    matrix = load_matrix(ROOT / "reports", ROOT / "cases")
    passing = [
        f"{r['case']} [{r['device']}] {r['outcome']}"
        for r in records
        if r["outcome"] in PASSING and not proven_elsewhere(r, mutant_report["torch"], cases, matrix)
    ]
    assert not passing, f"{len(passing)} mutants pass: " + "; ".join(passing)
    ran = [r for r in records if r["outcome"] not in ("skipped",)]
    assert len(ran) >= len(real_case_ids())  # every case ran on cpu at least
