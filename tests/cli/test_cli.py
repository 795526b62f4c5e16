"""``pitfalls`` as a user types it: list, show, run; bad input is one line and exit status 2."""

import json
import subprocess
import sys

import pytest
from planting import ROOT

from torch_pitfalls.cli import main


@pytest.fixture
def two_cases(corpus):
    corpus.plant("nan-thing")
    corpus.plant("old-thing", topic="shapes", affects="'<1.0'", broken="return torch.tensor(0.0)")
    return corpus


def cli(corpus, *args):
    return main(["--cases", str(corpus.cases), *args])


def test_list_shows_metadata_and_whether_expected_here(two_cases, capsys):
    assert cli(two_cases, "list") == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0].split()[:5] == ["id", "topic", "kind", "devices", "affects"]
    assert out[1].split() == ["nan-thing", "autograd", "silent", "cpu,cuda", "*", "cpu,cuda"]
    assert out[2].split() == ["old-thing", "shapes", "silent", "cpu,cuda", "<1.0", "no"]


def test_show_prints_the_story(corpus, capsys):
    corpus.plant("nan-thing", text="# %% [markdown]\n# # A title\n# Some prose.\n\n# %%\n" + _source("nan-thing"))
    assert cli(corpus, "show", "nan-thing") == 0
    out = capsys.readouterr().out
    assert out.startswith("# A title\nSome prose.") and "    │ def broken(device):" in out


def test_run_summarises_and_writes_the_report(two_cases, tmp_path, capsys):
    report = tmp_path / "not" / "yet" / "there.json"
    assert cli(two_cases, "run", "--device", "cpu", "--json", str(report)) == 0
    out = capsys.readouterr().out
    assert "nan-thing  reproduced" in out and "old-thing  absent" in out
    assert "2 runs of 2 cases: 1 reproduced, 1 absent" in out
    assert [r["outcome"] for r in json.loads(report.read_text())["records"]] == ["reproduced", "absent"]


def test_run_exits_1_on_a_mismatch(corpus, capsys):
    corpus.plant("nan-thing", affects="'<1.0'")
    assert cli(corpus, "run", "nan-thing", "--device", "cpu") == 1
    assert "nan-thing [cpu] mismatch: symptom seen but not expected" in capsys.readouterr().out


def test_a_malformed_case_is_an_error_and_the_others_still_run(corpus, capsys):
    corpus.plant("nan-thing")
    corpus.plant("bad-thing", text="def broken(:\n")
    assert cli(corpus, "run", "--device", "cpu") == 1
    captured = capsys.readouterr()
    assert "bad-thing [-] error: import failed: SyntaxError" in captured.out
    assert "nan-thing  reproduced" in captured.out
    assert "malformed case" in captured.err


@pytest.mark.parametrize(
    "args, message",
    [
        (["run", "no-such-case"], "unknown case id 'no-such-case'"),
        (["run", ""], "unknown case id ''"),
        (["show", "no-such-case"], "unknown case id 'no-such-case'"),
        (["run", "--device", "tpu"], "unknown device 'tpu'"),
        (["run", "--frobnicate"], "unrecognized arguments: --frobnicate"),
        (["launch"], "invalid choice: 'launch'"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(two_cases, capsys, args, message):
    assert cli(two_cases, *args) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message in captured.err
    assert captured.out == ""


def test_a_json_path_that_cannot_be_written_is_refused_before_running(two_cases, tmp_path, capsys):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    assert cli(two_cases, "run", "--json", str(blocker / "report.json")) == 2
    assert "is a file, not a folder" in capsys.readouterr().err
    assert cli(two_cases, "run", "--json", str(tmp_path)) == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a-file", "cases"]


def test_a_missing_cases_folder_is_named(tmp_path, capsys):
    assert main(["--cases", str(tmp_path / "nowhere"), "list"]) == 2
    assert "no such cases directory" in capsys.readouterr().err


def test_python_dash_m_harness_is_the_same_cli(two_cases):
    proc = subprocess.run(
        [sys.executable, "-m", "torch_pitfalls", "--cases", str(two_cases.cases), "run", "nope"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert (
        proc.returncode == 2 and proc.stderr.strip() == "pitfalls: error: unknown case id 'nope' (see 'pitfalls list')"
    )


def _source(case_id):
    from planting import case_source

    return case_source(case_id)


def test_a_broken_numpy_bridge_is_one_environment_error_and_nothing_runs(two_cases, capsys, monkeypatch, tmp_path):
    """torch < 2.3 beside NumPy 2 ("Failed to initialize NumPy"): from_numpy raises. The run
    names the versions and the fix instead of blaming every case, and writes no report."""
    import torch

    def no_numpy(array):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(torch, "from_numpy", no_numpy)
    monkeypatch.setattr(torch, "__version__", "1.13.1+cu117")
    report = tmp_path / "report.json"
    assert cli(two_cases, "run", "--json", str(report)) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "environment: torch 1.13.1+cu117 cannot exchange arrays with NumPy" in err
    assert "(RuntimeError: Numpy is not available): install 'numpy<2' beside it (nothing was run)" in err
    assert not report.exists()


def test_the_numpy_rule_is_one_for_make_and_the_matrix():
    from torch_pitfalls.run.numpy_rule import numpy_requirement

    assert [numpy_requirement(v) for v in ("1.13.1", "2.2.2", "2.3.1", "2.15.0")] == ["numpy<2", "numpy<2", None, None]
    assert "harness/run/numpy_rule.py $(TORCH)" in (ROOT / "Makefile").read_text()


@pytest.mark.parametrize("command", [["run"], ["list"], ["show", "backward-twice"]])
def test_without_torch_the_commands_that_need_it_say_so_in_one_line(monkeypatch, capsys, command):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "torch" else real(name, *a))
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "torch is not installed here" in err[0] and "never installs one" in err[0]
