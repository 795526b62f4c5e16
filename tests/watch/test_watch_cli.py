"""`pitfalls watch` as a user runs it (a fresh interpreter each), and `pytest --pitfalls-watch`."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from planting import subprocess_env

from torch_pitfalls.helpers import stretched

PROGRAM = textwrap.dedent("""\
    import sys
    import torch
    import torch.nn as nn
    print("the program's own output", sys.argv[1:])
    model = nn.Linear(3, 1)
    for step in range(4):
        loss = nn.MSELoss()(model(torch.randn(8, 3)), torch.randn(8))  # (8, 1) against (8,)
        loss.backward()
    if "--raise" in sys.argv:
        torch.zeros(2, 3).masked_fill(torch.zeros(2, 3, dtype=torch.uint8), 1.0)
    sys.exit(int(sys.argv[-1]) if sys.argv[-1].isdigit() else 0)
""")
CLEAN = "import torch\nprint(torch.ones(2).sum().item())\n"


def watch(tmp_path, *args, program=PROGRAM):
    script = tmp_path / "train.py"
    script.write_text(program, encoding="utf-8")
    cmd = [sys.executable, "-m", "torch_pitfalls", "watch", *args]
    return subprocess.run(
        [c.replace("SCRIPT", str(script)) for c in cmd],
        cwd=tmp_path,
        env=subprocess_env(),
        capture_output=True,
        text=True,
        timeout=stretched(600),
    )


def test_json_on_a_stdout_of_its_own_the_programs_exit_status_and_its_error_explained(tmp_path):
    """One real process: the report is alone on stdout (the program's own output moved to stderr
    at the file-descriptor level), the program's error ends it as Python would (traceback, exit 1),
    and torch's error is named by its case beside what the detectors saw."""
    proc = watch(tmp_path, "--format", "json", "SCRIPT", "--epochs", "3", "--raise")
    assert proc.returncode == 1, proc.stderr  # the program's own error: exit 1, with its traceback
    assert "Traceback (most recent call last)" in proc.stderr
    report = json.loads(proc.stdout)  # nothing but the report on stdout
    assert "the program's own output ['--epochs', '3', '--raise']" in proc.stderr  # argv as python gives it
    (finding,) = [f for f in report["findings"] if f["kind"] == "detected"]
    assert finding["case"] == "target-shape-broadcast" and finding["path"] == "train.py" and finding["line"] == 7
    assert finding["count"] == 4 and finding["page"] == "cases/target-shape-broadcast.html"
    assert "masked-fill-uint8-mask" in {f["case"] for f in report["findings"] if f["kind"] == "explained"}
    assert report["exit_status"] == 1 and report["errors"] == []


def test_the_programs_exit_status_is_kept(tmp_path, capsys):
    """In this process: sys.exit(3) is the command's status, with findings and without --fail."""
    from torch_pitfalls.cli import main

    script = tmp_path / "train.py"
    script.write_text(PROGRAM, encoding="utf-8")
    assert main(["watch", str(script), "3"]) == 3
    assert "train.py:7: [target-shape-broadcast]" in capsys.readouterr().err


def test_fail_turns_a_finding_into_exit_1_only_where_the_program_exited_0(tmp_path, capsys):
    """In this process (the text report goes to stderr; no file descriptor is moved)."""
    from torch_pitfalls.cli import main

    script = tmp_path / "train.py"
    for program, expected, said in (
        (CLEAN, 0, "pitfalls watch: nothing found"),
        (PROGRAM, 1, "train.py:7: [target-shape-broadcast]"),
    ):
        script.write_text(program, encoding="utf-8")
        assert main(["watch", "--fail", str(script)]) == expected
        assert said in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["nowhere.py"], "nowhere.py: no such file"),
        (["--select", "no-such-case", "SCRIPT"], "--select no-such-case: no detector belongs to that case"),
        (["--output", "{tmp}", "SCRIPT"], "--output {tmp}: is a directory"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(tmp_path, capsys, args, message):
    """Refused before the program starts, so in this process: nothing of it runs."""
    from torch_pitfalls.cli import main

    script = tmp_path / "train.py"
    script.write_text("raise SystemExit('the program ran')\n", encoding="utf-8")
    args = [a.replace("SCRIPT", str(script)).replace("{tmp}", str(tmp_path)) for a in args]
    assert main(["watch", *args]) == 2
    out, err = capsys.readouterr()
    (line,) = err.strip().splitlines()
    assert out == "" and line.startswith(f"pitfalls: error: {message.replace('{tmp}', str(tmp_path))}"), line


def test_pytest_option_watches_a_users_own_tests(pytester):
    pytester.makepyfile(
        test_user=textwrap.dedent("""\
        import torch
        import torch.nn.functional as F

        def test_binary_head():
            logits = torch.randn(4, 1, requires_grad=True)
            F.softmax(logits, dim=1).sum().backward()

        def test_fine():
            assert torch.ones(2).sum() == 2
    """)
    )
    out = pytester.path / "watch.json"
    result = pytester.runpytest(
        "-p",
        "torch_pitfalls.watch.plugin",
        "--pitfalls-watch-json",
        str(out),
        "--pitfalls-watch-fail",
        "-p",
        "no:randomly",
    )
    result.stdout.fnmatch_lines(["*pitfalls watch*", "*test_user.py:6: [[]softmax-singleton-axis[]]*"])
    assert result.ret == 1  # the tests passed; --pitfalls-watch-fail fails the session on a finding
    (finding,) = json.loads(out.read_text())["findings"]
    assert finding["extra"]["first_seen_in"] == "test_user.py::test_binary_head"
