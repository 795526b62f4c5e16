"""The recorded linter bench (reports/lint-bench.json, read by the site) is the bench as the cases
and rules are now, and it shows what issue 16 asks of `pitfalls lint`."""
from __future__ import annotations

import json

import pytest

from planting import ROOT

RECORDED = ROOT / "reports" / "lint-bench.json"


@pytest.fixture(scope="session")
def lint_bench(jobs) -> dict:
    return json.loads(jobs.get("lint-bench").output.read_text())


def test_the_recorded_bench_is_current(lint_bench):
    recorded = json.loads(RECORDED.read_text())
    stale = [(a["case"], a, b) for a, b in zip(recorded["table"], lint_bench["table"]) if a != b]
    assert (recorded["linters"], recorded["cases"]) == (lint_bench["linters"], lint_bench["cases"]), \
        "run: pitfalls lint-bench --write reports/lint-bench.json"
    assert stale == [], f"stale rows (pitfalls lint-bench --write reports/lint-bench.json): {stale[:3]}"
    assert recorded == lint_bench


def test_pitfalls_lint_catches_more_than_torchfix_and_never_fires_on_a_fix(lint_bench):
    t = lint_bench["totals"]
    assert t["pitfalls-lint"]["catches"] > t["torchfix"]["catches"]
    assert t["pitfalls-lint"]["fires_on_fixed"] == 0
    caught = {e["case"] for e in lint_bench["table"] if e["pitfalls-lint"]["catches"]}
    from harness.lint import RULES

    assert caught >= {c for r in RULES for c in r.cases}  # every rule's case is caught in the bench too
