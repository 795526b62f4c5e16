"""Bad input to every subcommand: one line on stderr, exit status 2, and no file left behind.

tests/cli/test_cli.py has the plain cases (unknown id, unknown device, a bad option, a ``--json``
path below a file); these are the rest, each with a report path that must stay unwritten.
"""

from __future__ import annotations

import errno
import subprocess
import sys
from pathlib import Path

import pytest
from planting import ROOT, subprocess_env

from torch_pitfalls.cli import main
from torch_pitfalls.helpers import stretched


@pytest.fixture
def two_cases(corpus):
    corpus.plant("nan-thing")
    corpus.plant("old-thing", topic="shapes", affects="'<1.0'", broken="return torch.tensor(0.0)")
    return corpus


@pytest.fixture
def out(tmp_path) -> Path:
    """Where reports are asked for: a folder holding one file, which nothing may add to."""
    folder = tmp_path / "out"
    folder.mkdir()
    (folder / "a-file").write_text("")
    return folder


def cli(corpus, *args):
    return main(["--cases", str(corpus.cases), *args])


@pytest.mark.parametrize(
    "args, message",
    [
        (["show", ""], "unknown case id ''"),
        (["list", "extra"], "unrecognized arguments: extra"),
        (["run", "--device", ""], "unknown device ''"),
        (["run", "nan-thing", "--json", ""], "--json: the report path is empty"),
        (["run", "no-such-case", "--json", "{out}/report.json"], "unknown case id 'no-such-case'"),
        (["run", "", "--json", "{out}/report.json"], "unknown case id ''"),
        (["run", "--device", "tpu", "--json", "{out}/report.json"], "unknown device 'tpu'"),
        (["run", "--json", "{out}/a-file/report.json"], "{out}/a-file is a file, not a folder"),
        (["run", "--json", "{out}"], "--json {out}: is a directory"),
        # the planted cases have no reports/ beside them, and a folder given must exist
        (["matrix"], "reports: no such reports folder"),
        (["upgrade", "2.3.1", "2.6.0"], "reports: no such reports folder"),
        (["matrix", "--reports", "{out}/nowhere"], "--reports {out}/nowhere: no such reports folder"),
    ],
)
def test_bad_input_is_one_line_exit_2_and_writes_nothing(two_cases, out, capsys, args, message):
    assert cli(two_cases, *(a.format(out=out) for a in args)) == 2
    captured = capsys.readouterr()
    assert captured.err.count("\n") == 1 and message.format(out=out) in captured.err
    assert captured.out == ""  # refused before any case ran
    assert [p.name for p in out.iterdir()] == ["a-file"]


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs a folder that takes no files: Linux's /proc")
def test_a_folder_that_takes_no_files_is_refused_before_running(two_cases, capsys):
    assert cli(two_cases, "run", "--json", "/proc/pitfalls-report.json") == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("pitfalls: error: --json /proc/pitfalls-report.json: /proc is not writable (")
    assert captured.err.count("\n") == 1 and captured.out == ""


def test_a_report_that_fails_to_write_is_one_line_and_exit_2(two_cases, out, capsys, monkeypatch):
    import torch_pitfalls.run.report

    def disk_full(report, path):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(torch_pitfalls.run.report, "write_report", disk_full)
    path = out / "report.json"
    assert cli(two_cases, "run", "-q", "--device", "cpu", "--json", str(path)) == 2
    captured = capsys.readouterr()
    assert captured.err == f"pitfalls: error: --json {path}: cannot be written (No space left on device)\n"
    assert "2 runs of 2 cases" in captured.out  # the summary came first
    assert [p.name for p in out.iterdir()] == ["a-file"]


def test_python_dash_m_harness_refuses_a_report_below_a_file(two_cases, out):
    cmd = [
        sys.executable,
        "-m",
        "torch_pitfalls",
        "--cases",
        str(two_cases.cases),
        "run",
        "--json",
        str(out / "a-file" / "r.json"),
    ]
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=subprocess_env(), timeout=stretched(300))
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr == f"pitfalls: error: --json {out}/a-file/r.json: {out}/a-file is a file, not a folder\n"
    assert [p.name for p in out.iterdir()] == ["a-file"]
