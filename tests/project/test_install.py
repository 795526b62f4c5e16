"""The corpus as a user installs it: the wheel (checked), a fresh venv beside the user's own torch,
and from an empty directory `pitfalls run`, `pytest --pyargs torch_pitfalls.cases` and the site's
downloaded notebooks in a kernel of that venv (one run, tests/install_run.py, in the background)."""

from __future__ import annotations

import json
import re

import pytest
from install_run import NOTEBOOKS, SAMPLE
from planting import ROOT

from docs.site.outputs import clean


@pytest.fixture(scope="session")
def installed(jobs) -> dict:
    run = jobs.get("install")
    return json.loads(run.output.read_text())["steps"]


def test_the_wheel_builds_and_passes_check_wheel_contents(installed):
    assert installed["build"]["rc"] == 0, installed["build"]["stderr"]
    assert installed["wheel"]["names"] == ["torch_pitfalls-0.1.0-py3-none-any.whl"]
    assert installed["check-wheel-contents"]["rc"] == 0, installed["check-wheel-contents"]["stdout"]
    assert installed["install"]["rc"] == 0, installed["install"]["stderr"]


def test_the_installed_harness_and_cases_are_the_wheels(installed):
    """Not the checkout's: the venv sees no PYTHONPATH and runs from an empty directory."""
    harness_file, cases_dir = installed["where"]["stdout"].split()
    assert "/venv/lib/" in harness_file and harness_file.endswith("site-packages/torch_pitfalls/__init__.py")
    assert cases_dir.endswith("site-packages/torch_pitfalls/cases")
    assert installed["no-harness"]["rc"] == 0, "the wheel installed a top-level package named harness"


def test_pitfalls_run_works_from_an_empty_directory(installed):
    run = installed["run"]
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    outcomes = {r["case"]: r["outcome"] for r in run["report"]["records"]}
    assert outcomes == {case: "reproduced" for case in SAMPLE}
    assert run["report"]["provenance"]["torch"]["version"].startswith(run["report"]["torch"])


def test_pytest_pyargs_collects_the_installed_cases(installed):
    run = installed["pytest"]
    assert run["rc"] == 0, run["stdout"] + run["stderr"]
    for case, topic in SAMPLE.items():
        assert f"PASSED {topic}/{case.replace('-', '_')}.py::{case}[cpu]" in run["stdout"]
    assert "site-packages/torch_pitfalls/cases" in run["stdout"]  # the wheel's files, not a checkout's


def test_the_recorded_matrix_is_read_from_any_folder(installed):
    """`pitfalls matrix` and `pitfalls upgrade` in an empty folder read the matrix the wheel ships."""
    check, up = installed["matrix"], installed["upgrade"]
    assert check["rc"] == 0, check["stdout"] + check["stderr"]
    shipped = len(list((ROOT / "reports").glob("torch-*.json")))  # the empty folder has none of its own
    summary = check["stdout"].strip().splitlines()[-1]  # after the list of stale and missing cells
    assert summary.startswith(f"{shipped} reports, ") and "; 0 failing, " in summary
    assert up["rc"] == 0, up["stdout"] + up["stderr"]
    result = up["result"]
    assert (result["from"], result["to"]) == ("2.3.1", "2.6.0") and result["cases"] > 0


def test_upgrade_and_lint_upgrade_work_from_any_folder(installed):
    """`pitfalls upgrade` and `pitfalls lint --upgrade` on the shipped matrix, a usage error of
    each (exit 2, one line), and `lint --diff` writing the fix it would make."""
    text, lint, diff = installed["upgrade-text"], installed["lint-upgrade"], installed["lint-diff"]
    assert text["rc"] == 0 and text["head"].startswith("torch 2.3.1 -> 2.6.0 on cpu ("), text["head"] + text["stderr"]
    assert lint["rc"] == 1, lint["stdout"] + lint["stderr"]  # torch.load: its cases change in 2.4.1 and 2.6.0
    out = lint["stdout"].splitlines()
    assert lint["head"].startswith("torch 2.3.1 -> 2.6.0 on cpu (the recorded matrix): 1 finding whose case changes")
    assert "in torch 2.6.0:" in out and any(line.startswith("  train.py:5:12: PTF126 ") for line in out)
    for name, problem in (
        ("upgrade-usage", "FROM 2.6.0 must be an older release than TO 2.3.1"),
        ("lint-upgrade-usage", "FROM 2.3.0 is not a release of the recorded matrix"),
    ):
        err = installed[name]["stderr"].strip().splitlines()
        assert installed[name]["rc"] == 2 and len(err) == 1 and problem in err[0], installed[name]
    assert diff["rc"] == 1 and "+    return torch.load(path, weights_only=False)" in diff["stdout"], diff


def test_downloaded_notebooks_run_top_to_bottom_with_torch_alone(installed):
    """In a kernel that cannot import the project (no wheel, no checkout on its path), each
    downloaded notebook runs top to bottom and its calls show what the site recorded."""
    assert installed["notebooks"]["harness"]["importable"] is False, installed["notebooks"]["harness"]
    results = installed["notebooks"]["runs"]
    assert set(results) == set(NOTEBOOKS)
    for case, result in results.items():
        assert result["ok"], f"{case}: {result.get('error')}"
        sources = "\n".join(result["sources"])
        assert not re.search(
            r"^\s*(?:from|import)\s+(?:harness|torch_pitfalls)\b|pip install torch-pitfalls", sources, re.M
        ), case
        here = {name: clean(text) for name, text in result["calls"]["here"].items()}  # torch colours some messages
        assert here == result["calls"]["recorded"], case
        assert set(result["calls"]["here"]) == {"broken", "fixed"} and result["outputs"] > 0
