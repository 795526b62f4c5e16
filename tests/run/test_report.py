"""The report file and the summary table."""

import datetime as dt
import json
import os
from pathlib import Path

import pytest

from torch_pitfalls.run.report import Record, build_report, summary_table, write_report


def rec(case, device, outcome):
    return Record(
        case=case, topic="autograd", kind="silent", device=device, outcome=outcome, expected=True, observed=True
    )


def test_summary_table_is_case_by_device_with_totals():
    table = summary_table(
        [rec("a-case", "cpu", "reproduced"), rec("a-case", "cuda", "skipped"), rec("longer-case", "cpu", "mismatch")]
    )
    assert table.splitlines() == [
        "case         cpu         cuda",
        "-----------  ----------  -------",
        "a-case       reproduced  skipped",
        "longer-case  mismatch    -",
        "3 runs of 2 cases: 1 reproduced, 1 mismatch, 1 skipped",
        "observed and proven: 1; unverified here: 0; not run (skipped): 1",
    ]


def test_report_is_written_whole_and_creates_its_folder(tmp_path):
    path = tmp_path / "new" / "folder" / "report.json"
    report = build_report([rec("a-case", "cpu", "reproduced")], dt.datetime.now(dt.timezone.utc))
    write_report(report, path)
    assert json.loads(path.read_text())["records"][0]["case"] == "a-case"
    assert os.listdir(path.parent) == ["report.json"]  # no temp file left behind


def test_a_failed_write_leaves_nothing(tmp_path):
    path = tmp_path / "report.json"
    with pytest.raises(TypeError):
        write_report({"not json": object()}, path)
    assert os.listdir(tmp_path) == []


def test_a_report_is_readable_by_others_as_any_new_file_is(tmp_path):
    path = write_report(
        build_report([rec("a-case", "cpu", "reproduced")], dt.datetime.now(dt.timezone.utc)), tmp_path / "r.json"
    )
    umask = os.umask(0)
    os.umask(umask)
    assert path.stat().st_mode & 0o777 == 0o666 & ~umask  # not mkstemp's private 0600


def test_without_the_schema_a_report_is_still_read_whole(tmp_path):
    """``schema=False`` (the explainer's fast start) skips the schema alone: a truncated file and
    totals that disagree with the records are still refused; a field the schema forbids is not."""
    from torch_pitfalls.run.report import ReportError, load_report

    shipped = sorted((Path(__file__).resolve().parents[2] / "reports").glob("torch-*-cpu.json"))[0]
    report = json.loads(shipped.read_text(encoding="utf-8"))
    truncated = tmp_path / "truncated.json"
    truncated.write_text(shipped.read_text(encoding="utf-8")[:1000], encoding="utf-8")
    with pytest.raises(ReportError, match="not valid JSON"):
        load_report(truncated, schema=False)
    wrong_totals = tmp_path / "totals.json"
    wrong_totals.write_text(json.dumps({**report, "totals": {"reproduced": 1}}), encoding="utf-8")
    with pytest.raises(ReportError, match="totals"):
        load_report(wrong_totals, schema=False)
    off_schema = tmp_path / "off-schema.json"
    off_schema.write_text(json.dumps({**report, "an_unknown_field": 1}), encoding="utf-8")
    with pytest.raises(ReportError, match="schema"):
        load_report(off_schema)
    assert load_report(off_schema, schema=False)["an_unknown_field"] == 1
