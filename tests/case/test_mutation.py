"""A fix that behaves like the broken code never passes.

For every case and device, the runner judges the broken run as it would judge a fix (``runner.
as_fix``: no error, no warning, no symptom, the check accepts it) and records the outcome a copy
whose ``fixed`` calls ``broken`` would get (``Record.mutant``). Read here from the session's plain
run: no mutant may come out as a pass (``reproduced`` or ``absent``). That it is the outcome of
the copy, without running the broken code twice, is shown on planted cases in
``tests/run/test_runner.py`` (``test_the_recorded_mutant_is_the_outcome_of_the_mutated_copy``);
the catalogue's ``tools/mutation-check`` runs the copies themselves.

One exception, by construction: an upgrade case on a release outside the range the matrix
brackets (before its change, or after it ended), where the broken code is the right spelling and
nothing can tell it from the fix. Its mutant is ``absent`` there; it is allowed only when the
recorded matrix proves the case's fix where the symptom shows (a fresh ``reproduced`` cell).
"""

from __future__ import annotations

from planting import ROOT, real_case_ids

from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import load_matrix
from torch_pitfalls.run.devices import torch_version as cases_torch_version
from torch_pitfalls.run.report import PASSING


def proven_elsewhere(record: dict, torch_version: str, cases: dict, matrix) -> bool:
    case = cases[record["case"]].case
    if record["mutant"] != "absent" or not case.outside_observed_change(torch_version, record["device"]):
        return False
    return any(cell.status == "reproduced" for cell in matrix.row(record["case"], record["device"]))


def test_no_case_passes_with_its_fix_replaced_by_the_broken_code(clean_records):
    records = list(clean_records.values())
    assert {r["case"] for r in records} == real_case_ids()  # every case, none failed to load
    cases = {lc.id: lc for lc in load_cases(ROOT / "cases")}
    matrix = load_matrix(ROOT / "reports", ROOT / "cases")
    torch_version = cases_torch_version()
    passing = [
        f"{r['case']} [{r['device']}] {r['mutant']}"
        for r in records
        if r["mutant"] in PASSING and not proven_elsewhere(r, torch_version, cases, matrix)
    ]
    assert not passing, f"{len(passing)} mutants pass: " + "; ".join(passing)
    ran = [r for r in records if r["outcome"] != "skipped"]
    assert len(ran) >= len(real_case_ids())  # every case ran on cpu at least
    judged = [r for r in ran if r["observed"] is not None]  # its broken variant gave a verdict
    assert judged and all(r["mutant"] for r in judged), [r["case"] for r in judged if not r["mutant"]]
