"""`pitfalls lint`: every rule proven by its cases (broken flagged, fixed clean), every fixed
variant of the corpus clean, and the places a linter lives (text, JSON, SARIF, flake8, pre-commit,
noqa, select/ignore, exit codes, files that do not parse)."""

from __future__ import annotations

import functools
import json
import subprocess
import sys
import textwrap

import pytest
import yaml
from planting import ROOT

from torch_pitfalls.casefile import read_case
from torch_pitfalls.cli import main
from torch_pitfalls.lint import RULES, active_rules, lint_text
from torch_pitfalls.loader import case_id_of, find_case_files

CASE_FILES = {case_id_of(p): p for p in find_case_files(ROOT / "cases")}
EVERY_RULE = active_rules(None)
PROVEN = sorted({(case, r.id) for r in RULES for case in r.cases})


@functools.lru_cache(maxsize=None)
def programs(case_id, variant):
    return tuple(read_case(CASE_FILES[case_id]).variant_programs(variant))


def findings(case_id, variant, rules=EVERY_RULE, preview=False):
    if rules is EVERY_RULE:  # every rule's proof and the fixed-code sweep read the same programs
        return list(_every_rule_findings(case_id, variant, preview))
    return [f for label, text in programs(case_id, variant) for f in lint_text(text, label, rules, preview=preview)]


@functools.lru_cache(maxsize=None)
def _every_rule_findings(case_id, variant, preview=False):
    return tuple(
        f for label, text in programs(case_id, variant) for f in lint_text(text, label, EVERY_RULE, preview=preview)
    )


@pytest.mark.parametrize("case_id, rule", PROVEN, ids=[f"{r}-{c}" for c, r in PROVEN])
def test_each_rule_flags_its_cases_broken_code_and_not_the_fixed(case_id, rule):
    assert case_id in CASE_FILES, f"rule {rule} names a case that does not exist: {case_id}"
    at_preview = bool(next(r for r in RULES if r.id == rule).case_at_preview)
    assert rule in {f.rule for f in findings(case_id, "broken", preview=at_preview)}
    assert [f.as_text() for f in findings(case_id, "fixed", preview=True) if f.rule == rule] == []


def test_no_fixed_variant_of_the_corpus_has_any_finding():
    dirty = {c: [f.as_text() for f in findings(c, "fixed")] for c in CASE_FILES}
    assert {c: f for c, f in dirty.items() if f} == {}


def test_a_rule_that_matches_nothing_is_caught():
    """The check above fails when a rule is broken (its own sabotage)."""
    from dataclasses import replace

    rule = next(r for r in RULES if r.id == "PTF110")
    deaf = replace(rule, test=lambda node, ctx: False)
    assert "PTF110" not in {f.rule for f in findings("set-default-tensor-type", "broken", [deaf])}
    loud = replace(rule, test=lambda node, ctx: type(node).__name__ == "Call", calls=())  # offered every call
    assert findings("set-default-tensor-type", "fixed", [loud])


BAD = textwrap.dedent("""\
    import torch
    from torch.nn import init

    def train(model, path):
        init.xavier_uniform(model.weight)
        state = torch.load(path)
        torch.set_default_tensor_type(torch.DoubleTensor)  # noqa: PTF110
        return state
""")


@pytest.fixture
def project(tmp_path):
    (tmp_path / "bad.py").write_text(BAD)
    (tmp_path / "async_kw.py").write_text(
        "import torch\nclass Shift(torch.nn.Module):\n    def forward(self, x):\n"
        "        return x + torch.zeros(4, 4).cuda(async=True)\n"
    )
    (tmp_path / "broken_syntax.py").write_text("def f(:\n")
    (tmp_path / "clean.py").write_text("import torch\nx = torch.zeros(1)\n")
    return tmp_path


def test_text_output_exit_codes_noqa_and_files_that_do_not_parse(project, capsys):
    assert main(["lint", "--all-versions", str(project)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert any(line.startswith(f"{project / 'bad.py'}:5:5: PTF001 ") for line in out)
    assert any(line.startswith(f"{project / 'bad.py'}:6:13: PTF126 ") for line in out)
    assert not any("PTF110" in line for line in out)  # silenced on its line
    assert any(line.startswith(f"{project / 'async_kw.py'}:4:43: PTF003 ") for line in out)
    # the SyntaxError the corpus knows is repaired in memory and the rest of that file is read (PTF020, a cost,
    # reports only with --preview)
    assert not any(" PTF020 " in line for line in out)
    assert main(["lint", "--all-versions", "--preview", str(project / "async_kw.py")]) == 1
    assert any(
        line.startswith(f"{project / 'async_kw.py'}:4:20: PTF020 ") for line in capsys.readouterr().out.splitlines()
    )
    assert main(["lint", "--all-versions", str(project)]) == 1
    out = capsys.readouterr().out.splitlines()
    assert any(
        line.startswith(f"{project / 'broken_syntax.py'}:1:") and " PTF000 the file does not parse" in line
        for line in out
    )
    assert main(["lint", str(project / "clean.py")]) == 0


def test_the_rules_follow_the_torch_version(project, capsys):
    assert main(["lint", "--torch", "2.5", "--select", "PTF126", str(project / "bad.py")]) == 1
    assert "PTF126" in capsys.readouterr().out
    assert main(["lint", "--torch", "1.13.1", "--select", "PTF126", str(project / "bad.py")]) == 0
    assert "0 findings in 1 file; 0 of" in capsys.readouterr().err  # the rule does not apply to 1.13.1
    assert main(["lint", "--select", "PTF126", str(project / "bad.py")]) == 1  # the installed torch: 2.13


@pytest.mark.parametrize(
    "argv, problem",
    [
        (["lint", "--select", "XYZ1", "."], "no rule id starts with 'XYZ1'"),
        (["lint", "no/such/path.py"], "no such file or folder"),
        (["lint", "--torch", "two", "."], "is not a PEP 440 version"),
        (["lint", "--format", "xml", "."], "invalid choice"),
    ],
)
def test_usage_errors_are_one_line_and_exit_2(argv, problem, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and problem in err[0]


def test_select_and_ignore(project, capsys):
    main(["lint", "--all-versions", "--select", "PTF1", "--ignore", "PTF126", str(project / "bad.py")])
    assert capsys.readouterr().out == ""
    main(["lint", "--all-versions", "--ignore", "PTF000", str(project / "broken_syntax.py")])
    assert "PTF000" not in capsys.readouterr().out


def test_json_and_sarif(project, capsys):
    assert main(["lint", "--all-versions", "--format", "json", str(project / "bad.py")]) == 1
    report = json.loads(capsys.readouterr().out)
    assert [(f["rule"], f["line"], f["case"]) for f in report["findings"]] == [
        ("PTF001", 5, "deprecated-init-without-underscore"),
        ("PTF126", 6, "torch-load-weights-only-default"),
    ]
    assert report["findings"][0]["page"] == "cases/deprecated-init-without-underscore.html"
    assert main(["lint", "--all-versions", "--format", "sarif", str(project)]) == 1
    log = json.loads(capsys.readouterr().out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    for result in run["results"]:
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        region = result["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert {r["ruleId"] for r in run["results"]} == {"PTF000", "PTF001", "PTF003", "PTF126"}


def test_the_flake8_plugin(project):
    done = subprocess.run(
        [sys.executable, "-m", "flake8", "--select", "PTF", str(project / "bad.py")],
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{project / 'bad.py'}:5:5: PTF001 ")
    assert not any("PTF110" in line for line in lines)  # flake8's own noqa


def test_the_pre_commit_hook(project):
    from pre_commit.clientlib import load_manifest

    hooks = load_manifest(str(ROOT / ".pre-commit-hooks.yaml"))
    hook = next(h for h in hooks if h["id"] == "pitfalls-lint")
    assert hook["language"] == "python" and "python" in hook["types"]
    # what pre-commit runs: the entry, with the staged files appended
    entry = hook["entry"].split()
    assert entry[0] == "pitfalls"
    done = subprocess.run(
        [sys.executable, "-m", "torch_pitfalls", *entry[1:], *hook["args"], str(project / "bad.py")],
        capture_output=True,
        text=True,
        cwd=project,
    )
    assert done.returncode == 1 and "PTF001" in done.stdout
    assert yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())[0]["id"] == "pitfalls-lint"


def test_a_deprecated_name_is_reported_once_per_file_and_the_older_branch_is_deliberate():
    text = textwrap.dedent("""\
        import torch
        from torch.nn.utils import weight_norm
        TORCH_GE_2_3 = tuple(int(p) for p in torch.__version__.split(".")[:2]) >= (2, 3)

        a = weight_norm(torch.nn.Linear(2, 2))
        b = weight_norm(torch.nn.Linear(2, 2))

        def load(path):
            if TORCH_GE_2_3:
                return torch.load(path, mmap=True)
            else:
                return torch.load(path)
        """)
    found = [(f.rule, f.line) for f in lint_text(text, "m.py", EVERY_RULE) if f.rule in ("PTF111", "PTF126")]
    assert found == [("PTF111", 5), ("PTF126", 10)]  # the second weight_norm and the else branch: quiet


def test_a_variant_program_keeps_its_decorators():
    """The program the linter reads is the case's code as written: a helper's @torch.no_grad() is
    part of graph-cut-in-forward's pitfall (ast's source of a def starts at ``def``)."""
    broken = programs("graph-cut-in-forward", "broken")[0][1]
    assert "@torch.no_grad()  # written for evaluation, where no gradient is needed\ndef standardize(h):" in broken


def test_async_keyword_of_the_projects_own_function_is_a_parse_error_not_ptf003():
    """PTF003 is torch's ``.cuda(async=True)`` (and .to/.type/.copy_): a project's own ``async=`` parameter
    (DeepRL's ReplayWrapper, round 15's held-out half, read wrong) is no torch pitfall; the file still does
    not parse on Python 3.7+, which PTF000 says."""
    own = "class Replay:\n    def __init__(self, size, async=True):\n        self.size = size\nr = Replay(3, async=True)\n"
    torchs = "import torch\nx = torch.zeros(2, 2).cuda(async=True)\n"
    assert [f.rule for f in lint_text(own, "replay.py", EVERY_RULE)] == ["PTF000"]
    assert [f.rule for f in lint_text(torchs, "move.py", EVERY_RULE)] == ["PTF003"]


def test_zero_grad_named_without_its_call_is_reported_on_that_line():
    """PTF011 reports a loop whose ``optimizer.zero_grad`` lacks its parentheses at that statement (the line
    to mend), not at the backward() it reports a loop without any zero_grad at."""
    text = (
        "import torch\n"
        "def train(model, loader):\n"
        "    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)\n"
        "    for x, y in loader:\n"
        "        optimizer.zero_grad\n"
        "        model(x).sum().backward()\n"
        "        optimizer.step()\n"
    )
    found = [(f.rule, f.line) for f in lint_text(text, "loop.py", RULES) if f.rule == "PTF011"]
    assert found == [("PTF011", 5)]
