"""Every upgrade case's boundary is observed, not copied: in the recorded matrix (reports/), the
first release where the symptom was seen is the first release its `affects` admits, the release
before it shows `absent`, and its fix passes on every release."""

from __future__ import annotations

from pathlib import Path

import pytest

from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import DEFAULT_VERSIONS, NOT_OBSERVED, STALE, load_matrix
from torch_pitfalls.matrix.claims import observed_bounds
from torch_pitfalls.run.report import PASSING

ROOT = Path(__file__).resolve().parents[2]
UPGRADE = sorted((lc for lc in load_cases(ROOT / "cases") if lc.topic == "upgrade"), key=lambda lc: lc.id)
DEVICE = "cpu"  # the matrix's device: every upgrade case is observable on CPU


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(ROOT / "reports", ROOT / "cases")


def boundary_problems(m, lc, versions=DEFAULT_VERSIONS) -> list[str]:
    """What is wrong with one case's boundaries in the matrix; [] when they hold.

    Every rule whose lower bound the matrix can bracket (a bound after its first release, not
    read in ``since``) must start where the records changed: its first release shows the symptom
    (in the rule's form), and the release before shows it absent (or, for a change of form such
    as a warning's category, in another form). An upgrade case needs at least one such bound."""
    cells = [m.cell(lc.id, v, DEVICE) for v in versions]
    unseen = [c.version for c in cells if c.status in (STALE, NOT_OBSERVED)]
    if unseen:
        return [f"no fresh record on {', '.join(unseen)} (make matrix CASES={lc.id})"]
    problems = [f"{c.version}: {c.status} ({c.record.detail})" for c in cells if c.status not in PASSING]
    bounds = observed_bounds(lc.case, m, DEVICE, versions)
    for rule, now, before in bounds:
        label = f"{rule.versions!r}" + (f" ({rule.form})" if rule.form else "")
        if now is None:
            problems.append(f"{label} admits no release of the matrix")
        elif not now.observed or (rule.form and now.form != rule.form):
            seen = next((c for c in cells if c.observed and (not rule.form or c.form == rule.form)), None)
            problems.append(
                f"{label} starts at {now.version}, the matrix first saw it on {seen.version if seen else 'no release'}"
            )
        elif before.observed and before.form == now.form:
            problems.append(f"{label} starts at {now.version}, but {before.version} already shows it")
        elif not before.observed and before.status != "absent":
            problems.append(f"the release before {label}, {before.version}, is {before.status}, not absent")
    if not any(now is not None for _, now, _ in bounds):
        problems.append(
            f"affects {lc.case.affects_text!r} has no bound inside the matrix: an upgrade case "
            "needs a release before the change"
        )
    return problems


def test_the_topic_has_at_least_thirty_cases():
    assert len(UPGRADE) >= 30, [lc.id for lc in UPGRADE]


@pytest.mark.parametrize("lc", UPGRADE, ids=[lc.id for lc in UPGRADE])
def test_the_declared_boundary_is_the_observed_one(matrix, lc):
    assert boundary_problems(matrix, lc) == []


def test_a_boundary_one_release_off_is_caught(matrix):
    """The check above fails when `affects` is moved by one release (its own sabotage)."""
    from dataclasses import replace

    for lc in UPGRADE[:3]:
        start = next(v for v in DEFAULT_VERSIONS if lc.case.expected(v, DEVICE))
        earlier, later = (DEFAULT_VERSIONS[DEFAULT_VERSIONS.index(start) + k] for k in (-1, 1))
        for moved_to in (earlier, later):
            moved = replace(lc, case=replace(lc.case, affects=f">={moved_to}"))
            assert any(f"starts at {moved_to}" in p for p in boundary_problems(matrix, moved)), (lc.id, moved_to)
