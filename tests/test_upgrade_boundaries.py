"""Every upgrade case's boundary is observed, not copied: in the recorded matrix (reports/), the
first release where the symptom was seen is the first release its `affects` admits, the release
before it shows `absent`, and its fix passes on every release."""
from __future__ import annotations

from pathlib import Path

import pytest

from harness.loader import load_cases
from harness.matrix import DEFAULT_VERSIONS, NOT_OBSERVED, STALE, load_matrix
from harness.report import PASSING

ROOT = Path(__file__).resolve().parent.parent
UPGRADE = sorted((lc for lc in load_cases(ROOT / "cases") if lc.topic == "upgrade"), key=lambda lc: lc.id)
DEVICE = "cpu"  # the matrix's device: every upgrade case is observable on CPU


@pytest.fixture(scope="module")
def matrix():
    return load_matrix(ROOT / "reports", ROOT / "cases")


def boundary_problems(m, lc, versions=DEFAULT_VERSIONS) -> list[str]:
    """What is wrong with one case's boundary in the matrix; [] when it holds."""
    cells = [m.cell(lc.id, v, DEVICE) for v in versions]
    unseen = [c.version for c in cells if c.status in (STALE, NOT_OBSERVED)]
    if unseen:
        return [f"no fresh record on {', '.join(unseen)} (make matrix CASES={lc.id})"]
    problems = [f"{c.version}: {c.status} ({c.record.detail})" for c in cells if c.status not in PASSING]
    declared = [v for v in versions if lc.case.expected(v, DEVICE)]
    observed = [c.version for c in cells if c.observed]
    if not declared:
        problems.append(f"affects {lc.case.affects_text!r} admits no release of the matrix")
    elif declared[0] == versions[0]:
        problems.append(f"affects {lc.case.affects_text!r} starts at or before {versions[0]}: an upgrade case "
                        "needs a release before the change")
    elif not observed or observed[0] != declared[0]:
        problems.append(f"affects {lc.case.affects_text!r} starts at {declared[0]}, the matrix first saw the "
                        f"symptom on {observed[0] if observed else 'no release'}")
    else:
        before = cells[versions.index(declared[0]) - 1]
        if before.status != "absent":
            problems.append(f"the release before the change, {before.version}, is {before.status}, not absent")
    return problems


def test_the_topic_has_at_least_thirty_cases():
    assert len(UPGRADE) >= 30, [lc.id for lc in UPGRADE]


@pytest.mark.parametrize("lc", UPGRADE, ids=[lc.id for lc in UPGRADE])
def test_the_declared_boundary_is_the_observed_one(matrix, lc):
    assert boundary_problems(matrix, lc) == []


def test_a_boundary_one_release_off_is_caught(matrix):
    """The check above fails when `affects` is moved by one release (its own sabotage)."""
    from dataclasses import replace

    lc = UPGRADE[0]
    start = next(v for v in DEFAULT_VERSIONS if lc.case.expected(v, DEVICE))
    later = DEFAULT_VERSIONS[DEFAULT_VERSIONS.index(start) + 1]
    moved = replace(lc, case=replace(lc.case, affects=f">={later}"))
    assert any(f"starts at {later}" in p for p in boundary_problems(matrix, moved))
