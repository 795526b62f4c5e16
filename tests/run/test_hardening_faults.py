"""Faults planted in a temp copy of part of the real corpus: each gets a named outcome, every other
case still reports what it reports in the clean run, and the run ends with its summary and its
report, through ``python -m torch_pitfalls run`` and through pytest alike.

The faults go into ``autograd/``, beside that topic's real cases (most of whose files sort after
them) and the ``numerics`` ones: a fault that poisoned the process (a leaked global, a crash)
would change what those report.

All eight faults share one corpus and one run per front end (two runs, not sixteen): each fault
is checked by its own record, and the real cases after them show whether one poisoned the rest.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import asdict

import pytest
from background import FAULTS, NAN, WORKER_STARTUP_S
from planting import copied_case_ids, differences, outcomes

from torch_pitfalls.case import DEVICES
from torch_pitfalls.loader import load_case
from torch_pitfalls.run.runner import run_case

RECORD_MAX_CHARS = 4096  # a record in a report, as JSON: the largest real one is under 1,000
# id -> (device, outcome, the start of its detail); the faults are planted by ``background``
NAMED = {
    "fault-syntax": ("-", "error", "import failed: SyntaxError"),
    "fault-missing-import": (
        "-",
        "error",
        "import failed: ModuleNotFoundError: No module named 'no_such_module_for_pitfalls'",
    ),
    "fault-raises-in-fix": (
        "cpu",
        "fix-failed",
        "the fixed variant raised: raised RuntimeError: the fix itself is broken",
    ),
    "fault-segfault": ("cpu", "error", "broken variant: isolated run crashed (SIGSEGV)"),
    "fault-hang": (
        "cpu",
        "error",
        f"broken variant: isolated run killed: the machine timed out, past its {1 + int(WORKER_STARTUP_S)} s time "
        "limit (stretched with the machine's load)",
    ),
    "fault-leaks-global": ("cpu", "error", "broken variant leaked global state: default dtype, grad mode"),
    "fault-prints-megabyte": ("cpu", "reproduced", ""),
    "fault-leaves-file": (
        "cpu",
        "error",
        "broken variant leaked global state: files left in the working directory (left-behind.txt)",
    ),
}
assert set(NAMED) == set(FAULTS)


@pytest.fixture(scope="session")
def faulty(faults_pytest):
    return faults_pytest.corpus


@pytest.fixture(params=["cli", "pytest"])
def run(request):
    return request.getfixturevalue(f"faults_{request.param}")


@pytest.mark.parametrize("case_id", NAMED)
def test_each_fault_gets_its_named_outcome(run, case_id):
    device, outcome, detail = NAMED[case_id]
    by_key = {(r["case"], r["device"]): r for r in run.report["records"]}
    record = by_key[case_id, device]
    assert (record["outcome"], record["detail"][: len(detail)]) == (outcome, detail), record


def test_a_megabyte_of_prints_is_counted_in_the_record(run):
    (record,) = [r for r in run.report["records"] if (r["case"], r["device"]) == ("fault-prints-megabyte", "cpu")]
    assert "printed 2097153 characters, starting 'xxxx" in record["broken"]


def test_every_other_case_reports_as_in_the_clean_run(run, faulty, clean_records):
    real = copied_case_ids(faulty)
    assert len(real) >= 10
    expected = {key: r["outcome"] for key, r in clean_records.items() if key[0] in real}
    got = {key: o for key, o in outcomes(run.report).items() if key[0] in real}
    changed = differences(expected, got)
    assert not changed, "\n".join(changed)


def test_the_run_ends_with_its_summary_and_report(run, faulty):
    totals = Counter(r["outcome"] for r in run.report["records"])
    real = copied_case_ids(faulty)
    loadable = len(real) + len(FAULTS) - 2  # all but the syntax error and the missing import
    assert sum(totals.values()) == loadable * len(DEVICES) + 2  # the two unloadable: one record each
    line = f"{sum(totals.values())} runs of {len(real) + len(FAULTS)} cases: "
    assert line in run.proc.stdout, run.proc.stdout[-3000:] + run.proc.stderr[-3000:]
    assert "report written to " in run.proc.stdout
    assert run.proc.returncode == 1  # failures, not a crash (a crash is a signal or a traceback)


def test_records_stay_small(run):
    sizes = {(r["case"], r["device"]): len(json.dumps(r)) for r in run.report["records"]}
    assert max(sizes.values()) < RECORD_MAX_CHARS, max(sizes.items(), key=lambda kv: kv[1])


def test_no_file_is_left_where_the_run_ran(run, faulty):
    expected = [] if run.cwd != faulty.root else ["cases", "report.json"]
    assert sorted(p.name for p in run.cwd.iterdir()) == expected


def test_no_temp_file_is_left_behind_even_by_a_crashed_worker(run):
    assert sorted(p.name for p in run.tmpdir.iterdir()) == []


def test_a_megabyte_of_prints_stays_out_of_the_terminal(faults_cli):
    assert len(faults_cli.proc.stdout) + len(faults_cli.proc.stderr) < 2**18


def test_a_variant_that_warns_in_a_loop_keeps_a_short_record(corpus):
    broken = "import warnings\nfor i in range(1000):\n    warnings.warn(f'warning {i} ' + 'w' * 200)\n" + NAN
    record = run_case(load_case(corpus.plant("warns-a-lot", broken=broken)), "cpu")
    assert record.outcome == "reproduced" and record.broken.endswith("and 997 more warnings")
    assert len(json.dumps(asdict(record))) < RECORD_MAX_CHARS
