"""`pitfalls lint --upgrade FROM TO PATH...`: the findings whose case's observed behaviour changes
between two recorded releases, by release, as the recorded matrix says (the same data as
`pitfalls upgrade`), in text, JSON and SARIF; bad versions are usage errors. And the conventions
around it: no PATH checks nothing and exits 0, and pre-commit with no Python file staged passes."""

from __future__ import annotations

import json

import pytest
from packaging.version import Version
from planting import ROOT

from torch_pitfalls.cli import main
from torch_pitfalls.lint import RULES_BY_ID
from torch_pitfalls.matrix import load_matrix

CODE = """\
import torch
from torch import nn


def resume(model, path):
    nn.init.xavier_uniform(model.weight)
    nn.utils.clip_grad_norm(model.parameters(), 1.0)
    return torch.load(path)
"""
START, END = "2.3.1", "2.6.0"


@pytest.fixture(scope="module")
def matrix(tmp_path_factory):
    """The recorded matrix of the releases these tests name (a third of the reports: the changes
    in a span come from its consecutive releases alone, so they are the whole matrix's)."""
    reports = tmp_path_factory.mktemp("reports")
    for version in (START, "2.4.1", "2.5.1", END, "2.14.1", "2.15.0"):
        (reports / f"torch-{version}-cpu.json").symlink_to(ROOT / "reports" / f"torch-{version}-cpu.json")
    return load_matrix(reports, ROOT / "cases")


@pytest.fixture(autouse=True)
def loaded_once(matrix, monkeypatch):
    """The recorded matrix, loaded once for these tests (a second or two each time); loading it
    from an empty folder, in a subprocess, is the install check's (tests/install_run.py)."""
    import torch_pitfalls.lint.cli

    monkeypatch.setattr(torch_pitfalls.lint.cli, "_matrix", lambda args, usage_error: matrix)


@pytest.fixture
def code(tmp_path):
    (tmp_path / "resume.py").write_text(CODE)
    return tmp_path / "resume.py"


def expected_releases(matrix, rule: str, start=START, end=END) -> set[str]:
    """Where the rule's cases change in (start, end], read from the matrix directly."""
    return {ch.since for case in RULES_BY_ID[rule].cases for ch in matrix.changes(case, "cpu", start=start, end=end)}


def lint_upgrade(*argv):
    return main(["--cases", str(ROOT / "cases"), "lint", "--upgrade", *argv])


def test_findings_are_grouped_by_the_release_where_their_case_changes(matrix, code, capsys):
    assert lint_upgrade(START, END, "--format", "json", str(code)) == 1
    view = json.loads(capsys.readouterr().out)
    assert (view["from"], view["to"]) == (START, END)
    listed = {}
    for group in view["releases"]:
        for f in group["findings"]:
            listed.setdefault(f["rule"], set()).add(group["release"])
            assert {ch["since"] for ch in f["changes"]} == {group["release"]}
            assert set(RULES_BY_ID[f["rule"]].cases) & {ch["case"] for ch in f["changes"]}
    for rule in ("PTF001", "PTF117", "PTF126"):  # every finding of the file, where the matrix has changes
        assert listed.get(rule, set()) == expected_releases(matrix, rule), rule
    assert expected_releases(matrix, "PTF126") >= {"2.4.1", "2.6.0"}  # the warning, then the new default
    assert [g["release"] for g in view["releases"]] == sorted({r for v in listed.values() for r in v}, key=Version)


def test_a_span_where_nothing_changes_lists_nothing(matrix, code, capsys):
    start, end = "2.14.1", "2.15.0"
    assert not any(expected_releases(matrix, r, start, end) for r in ("PTF001", "PTF117", "PTF126"))
    assert lint_upgrade(start, end, str(code)) == 0
    assert "no finding here has a case whose behaviour changes in between" in capsys.readouterr().out


def test_text_and_sarif(code, capsys):
    assert lint_upgrade(START, END, str(code)) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"torch {START} -> {END} on cpu (the recorded matrix): ")
    assert "in torch 2.6.0:" in out and any(line.startswith(f"  {code}:8:12: PTF126 ") for line in out)
    assert any("torch-load-weights-only-default: broken starts raising" in line for line in out)
    assert lint_upgrade(START, END, "--format", "sarif", str(code)) == 1
    results = json.loads(capsys.readouterr().out)["runs"][0]["results"]
    load = next(r for r in results if r["ruleId"] == "PTF126")
    assert {ch["since"] for ch in load["properties"]["upgrade"]["changes"]} >= {"2.4.1", "2.6.0"}


@pytest.mark.parametrize(
    "versions, problem",
    [
        (["2.3.0", "2.6.0"], "FROM 2.3.0 is not a release of the recorded matrix"),
        (["2.3.1", "2.7.0"], "TO 2.7.0 is not a release of the recorded matrix"),
        (["2.6.0", "2.3.1"], "FROM 2.6.0 must be an older release than TO 2.3.1"),
        (["2.6.0", "2.6.0"], "must be an older release"),
        (["two", "2.6.0"], "FROM 'two' is not a version"),
    ],
)
def test_bad_versions_are_usage_errors(versions, problem, code, capsys):
    assert lint_upgrade(*versions, str(code)) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0], err


def test_upgrade_picks_its_own_releases(code, capsys):
    assert main(["lint", "--torch", "2.4", "--upgrade", START, END, str(code)]) == 2
    assert "drop --torch" in capsys.readouterr().err


def test_no_paths_checks_nothing_and_exits_0(capsys):
    """What pre-commit passes a hook when no staged file matches (if it runs it at all)."""
    assert main(["lint"]) == 0
    assert "no files given: nothing to check" in capsys.readouterr().err


def test_pre_commit_with_no_python_file_staged_exits_0(tmp_path):
    """The hook as pre-commit itself runs it (this repository's hook definition, as a local hook of
    a fresh git repository): with only a text file staged it is skipped, and the commit goes on."""
    import os
    import subprocess
    import sys

    import yaml

    hook = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]
    local = {
        **hook,
        "language": "system",
        "entry": f"{sys.executable} -m torch_pitfalls {hook['entry'].split(' ', 1)[1]}",
    }
    (tmp_path / ".pre-commit-config.yaml").write_text(yaml.safe_dump({"repos": [{"repo": "local", "hooks": [local]}]}))
    (tmp_path / "notes.txt").write_text("no Python here\n")
    env = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / ".pre-commit-home"), "PYTHONPATH": str(ROOT)}
    for cmd in (
        ["git", "init", "-q"],
        ["git", "add", "notes.txt", ".pre-commit-config.yaml"],
        [sys.executable, "-m", "pre_commit", "run"],
    ):
        done = subprocess.run(cmd, cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "torch-pitfalls lint" in done.stdout and "(no files to check)Skipped" in done.stdout
