"""The version matrix: reports read only through validation, cells judged against the cases as
they are now, changes derived from observations, and `pitfalls matrix` in its four forms."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import replace

import pytest
from planting import REPORT_ENV as ENV
from planting import ROOT, case_sha

from torch_pitfalls.case import Affects
from torch_pitfalls.cli import main
from torch_pitfalls.matrix import NOT_OBSERVED, STALE, load_matrix, report_path
from torch_pitfalls.matrix.build import BuildError, merge, parse_versions
from torch_pitfalls.run.report import Record, ReportError, build_report, load_report, write_report

STARTED = dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc)


def record(corpus, case_id, observed, outcome=None, form=None, **kw):
    return Record(
        case=case_id,
        topic="autograd",
        kind="silent",
        device="cpu",
        outcome=outcome or ("reproduced" if observed else "absent"),
        expected=observed,
        observed=observed,
        form=form,
        source_sha256=kw.pop("source_sha256", case_sha(corpus, case_id)),
        **kw,
    )


def write(corpus, version, records, torch=None):
    report = build_report(records, STARTED, {"torch": torch or f"{version}+cpu", **ENV})
    return write_report(report, report_path(corpus.reports, version, "cpu"))


def test_cells_are_fresh_stale_or_not_observed(project):
    write(
        project,
        "2.0.1",
        [record(project, "first-case", True), record(project, "second-case", True, source_sha256="0" * 64)],
    )
    m = load_matrix(project.reports, project.cases)
    assert m.versions == ["2.0.1"] and m.devices == ["cpu"]
    assert m.cell("first-case", "2.0.1").status == "reproduced"
    assert m.cell("first-case", "2.0.1").observed is True
    stale = m.cell("second-case", "2.0.1")
    assert stale.status == STALE and stale.observed is None  # an old text's record says nothing now
    assert m.cell("first-case", "2.4.1").status == NOT_OBSERVED


def test_editing_a_case_makes_its_records_stale(project):
    write(project, "2.0.1", [record(project, "first-case", True), record(project, "second-case", True)])
    path = project.cases / "autograd" / "first_case.py"
    path.write_text(path.read_text() + "\n# an edit\n")
    m = load_matrix(project.reports, project.cases)
    assert [m.cell(c, "2.0.1").status for c in ("first-case", "second-case")] == [STALE, "reproduced"]


def test_changes_are_derived_from_the_observations(project):
    seen = {"1.13.1": False, "2.0.1": True, "2.1.2": True, "2.4.1": False}
    forms = {"1.13.1": None, "2.0.1": "warning", "2.1.2": "error", "2.4.1": None}
    for version, observed in seen.items():
        write(
            project,
            version,
            [record(project, "first-case", observed, form=forms[version]), record(project, "second-case", True)],
        )
    m = load_matrix(project.reports, project.cases)
    assert m.versions == ["1.13.1", "2.0.1", "2.1.2", "2.4.1"]  # by release, not by name
    assert [str(c) for c in m.changes("first-case")] == [
        "symptom since 2.0.1",
        "symptom: form changed in 2.1.2: warning -> error",
        "symptom gone in 2.4.1",
    ]
    assert m.changes("second-case") == []


def test_a_gap_or_a_stale_cell_does_not_invent_a_change(project):
    write(project, "1.13.1", [record(project, "first-case", False)])
    write(project, "2.0.1", [record(project, "first-case", True, source_sha256="0" * 64)])
    write(project, "2.1.2", [record(project, "first-case", False)])
    assert load_matrix(project.reports, project.cases).changes("first-case") == []


@pytest.mark.parametrize(
    "spoil, problem",
    [
        (lambda text: text[: len(text) // 2], "not valid JSON"),
        (lambda text: text.replace('"reproduced": 1', '"reproduced": 2'), "totals"),
        (lambda text: text.replace('"outcome": "reproduced"', '"outcome": "passed"'), "schema at records/0/outcome"),
        (lambda text: text.replace('"schema_version": 3', '"schema_version": 4'), "schema at schema_version"),
        (lambda text: text.replace('"duration_s": 0.0', '"duration_s": -1'), "schema at records/0/duration_s"),
    ],
    ids=["truncated", "totals-edited", "unknown-outcome", "future-schema", "negative-duration"],
)
def test_a_spoiled_report_is_refused_whole(project, spoil, problem):
    path = write(project, "2.0.1", [record(project, "first-case", True)])
    path.write_text(spoil(path.read_text()))
    with pytest.raises(ReportError, match=problem):
        load_report(path)
    with pytest.raises(ReportError, match=problem):
        load_matrix(project.reports, project.cases)


def test_a_report_must_hold_the_torch_its_name_says(project):
    write(project, "2.0.1", [record(project, "first-case", True)], torch="2.1.2+cpu")
    with pytest.raises(ReportError, match="name says torch 2.0.1, but it was recorded on torch 2.1.2"):
        load_matrix(project.reports, project.cases)


def test_two_records_of_one_cell_are_refused(project):
    path = write(project, "2.0.1", [record(project, "first-case", True), record(project, "first-case", True)])
    with pytest.raises(ReportError, match=r"more than one record for first-case \[cpu\]"):
        load_report(path)


def run_cli(project, capsys, *args):
    rc = main(["--cases", str(project.cases), "matrix", "--reports", str(project.reports), *args])
    out, err = capsys.readouterr()
    return rc, out, err


def test_check_lists_stale_and_missing_and_passes(project, capsys):
    write(project, "2.0.1", [record(project, "first-case", True, source_sha256="0" * 64)])
    rc, out, _ = run_cli(project, capsys, "--check")
    assert rc == 0
    assert "stale: first-case [cpu] torch 2.0.1" in out
    assert "missing: second-case [cpu] torch 2.0.1" in out


@pytest.mark.parametrize("outcome", ["mismatch", "fix-failed", "error"])
def test_check_fails_on_a_failing_cell(project, capsys, outcome):
    write(
        project,
        "2.0.1",
        [
            record(project, "first-case", True, outcome=outcome, detail="what went wrong"),
            record(project, "second-case", True),
        ],
    )
    rc, out, _ = run_cli(project, capsys, "--check")
    assert rc == 1
    assert f"failing: first-case [cpu] torch 2.0.1: {outcome}: what went wrong" in out


def test_check_fails_on_an_unknown_case_id(project, capsys):
    write(
        project,
        "2.0.1",
        [record(project, "first-case", True), replace(record(project, "first-case", True), case="no-such-case")],
    )
    rc, out, _ = run_cli(project, capsys, "--check")
    assert rc == 1 and "unknown case id 'no-such-case'" in out


def test_a_malformed_report_is_one_line_and_exit_1(project, capsys):
    path = write(project, "2.0.1", [record(project, "first-case", True)])
    path.write_text(path.read_text()[:100])
    rc, out, err = run_cli(project, capsys, "--check")
    assert rc == 1 and out == ""
    assert err.count("\n") == 1 and "torch-2.0.1-cpu.json: is not valid JSON" in err


def test_the_table_json_and_markdown_forms(project, capsys):
    write(project, "1.13.1", [record(project, "first-case", False), record(project, "second-case", True)])
    write(project, "2.0.1", [record(project, "first-case", True), record(project, "second-case", True)])
    rc, out, _ = run_cli(project, capsys)
    assert rc == 0
    row = next(line for line in out.splitlines() if line.startswith("first-case"))
    assert row.split() == ["first-case", ".", "R", "symptom", "since", "2.0.1"]
    rc, out, _ = run_cli(project, capsys, "--json")
    data = json.loads(out)
    first = next(c for c in data["cases"] if c["id"] == "first-case")
    assert first["cells"]["cpu"]["2.0.1"] == {"status": "reproduced", "observed": True, "form": None}
    assert [c["kind"] for c in first["changes"]["cpu"]] == ["symptom-appears"]
    assert first["changes"]["cpu"][0]["since"] == "2.0.1"
    rc, out, _ = run_cli(project, capsys, "--markdown")
    assert "| `first-case` | . | R | symptom since 2.0.1 |" in out


def test_an_unrecorded_device_is_a_usage_error(project, capsys):
    write(project, "2.0.1", [record(project, "first-case", True)])
    rc, _, err = run_cli(project, capsys, "--device", "cuda")
    assert rc == 2 and "no reports for device 'cuda'" in err


@pytest.mark.parametrize("text", ["", "2.4", "2.4.1+cpu", "2.5.0rc1", "two", "2.4.1 2.x"])
def test_build_refuses_a_version_that_names_no_release(text):
    with pytest.raises(BuildError):
        parse_versions(text)


def test_build_refuses_an_unknown_case_before_building_anything(tmp_path, capsys):
    from torch_pitfalls.matrix.build import main as build

    rc = build(
        ["--versions", "2.4.1", "--cases", "no-such-case", "--reports", str(tmp_path), "--uv", "/nonexistent/uv"]
    )
    assert rc == 2 and "unknown case id 'no-such-case'" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_merge_replaces_only_the_rerun_cases(project):
    old = build_report(
        [record(project, "first-case", False), record(project, "second-case", True)],
        STARTED,
        {"torch": "2.0.1+cpu", **ENV},
    )
    new = build_report([record(project, "first-case", True)], STARTED, {"torch": "2.0.1+cu118", **ENV})
    merged = merge(old, new, ["first-case"])
    assert [(r["case"], r["observed"]) for r in merged["records"]] == [("first-case", True), ("second-case", True)]
    assert merged["updated"][0]["cases"] == ["first-case"]
    path = write_report(merged, report_path(project.reports, "2.0.1", "cpu"))
    load_report(path)  # the merged report is itself a valid report
    with pytest.raises(BuildError, match="cannot merge"):
        merge(old, build_report([], STARTED, {"torch": "2.1.2", **ENV}), ["first-case"])


def test_build_reruns_only_stale_cases_and_merges_them(project, capsys):
    """`make matrix CASES=stale` on the installed torch (no download): after an edit, only the
    edited case runs again, and the report says so."""
    import torch
    from packaging.version import Version

    from torch_pitfalls.matrix.build import main as build

    version = Version(torch.__version__).base_version
    args = ["--versions", version, "--cases-dir", str(project.cases), "--reports", str(project.reports)]
    assert build(args) == 0
    path = report_path(project.reports, version, "cpu")
    first = load_report(path)
    assert {r["case"] for r in first["records"]} == {"first-case", "second-case"}
    edited = project.cases / "autograd" / "second_case.py"
    edited.write_text(edited.read_text() + "\n# an edit\n")
    assert load_matrix(project.reports, project.cases).cell("second-case", version).status == STALE
    assert build([*args, "--stale"]) == 0
    again = load_report(path)
    assert again["updated"][-1]["cases"] == ["second-case"]
    assert load_matrix(project.reports, project.cases).problems()["stale"] == []
    untouched = [r for r in again["records"] if r["case"] == "first-case"]
    assert untouched == [r for r in first["records"] if r["case"] == "first-case"]
    assert build([*args, "--stale"]) == 0
    assert "every record is fresh, nothing to run" in capsys.readouterr().err


def fp(error=None, warns=(), value=None):
    return {"error": error, "warnings": [{"category": c, "message": m} for c, m in warns], "value": value}


def fingerprinted(corpus, case_id, observed, broken, fixed=None):
    return record(corpus, case_id, observed, fingerprints={"broken": broken, "fixed": fixed or fp(value=1.0)})


@pytest.fixture
def history(project):
    """first-case: its message is reworded in 2.1.2 and its warning becomes a FutureWarning in
    2.4.1; second-case: its value moves only in the last bits (noise), then really in 2.4.1."""

    def err(m):
        return {"type": "RuntimeError", "message": m}

    steps = {
        "2.0.1": (err("expected scalar type Long but found Float"), [("UserWarning", "old alias")], 1.0),
        "2.1.2": (err("expected target dtype to be Long"), [("UserWarning", "old alias")], 1.0000001),
        "2.4.1": (err("expected target dtype to be Long"), [("FutureWarning", "old alias")], 2.0),
    }
    for version, (error, warns, value) in steps.items():
        write(
            project,
            version,
            [
                fingerprinted(project, "first-case", True, fp(error, warns)),
                fingerprinted(project, "second-case", True, fp(value=value)),
            ],
        )
    return project


def test_changes_are_classified_from_fingerprints_and_noise_is_not_a_change(history):
    m = load_matrix(history.reports, history.cases)
    assert [(c.kind, c.since, c.before, c.after) for c in m.changes("first-case")] == [
        ("message-reworded", "2.1.2", "expected scalar type Long but found Float", "expected target dtype to be Long"),
        ("warning-category", "2.4.1", "UserWarning: old alias", "FutureWarning: old alias"),
    ]
    assert [(c.kind, c.since) for c in m.changes("second-case")] == [("value-changed", "2.4.1")]
    assert m.changes("first-case", start="2.1.2") == m.changes("first-case")[1:]


def test_upgrade_lists_every_change_in_the_span_and_validates(history, capsys):
    import jsonschema

    from torch_pitfalls.matrix.upgrade import SCHEMA_FILE

    args = ["--cases", str(history.cases), "upgrade", "2.0.1", "2.4.1", "--reports", str(history.reports)]
    assert main(args) == 0
    out = capsys.readouterr().out
    assert "3 changes in 2 cases: 1 message-reworded, 1 warning-category, 1 value-changed" in out
    assert "first-case (broken, in 2.1.2): expected scalar type Long but found Float -> expected target dtype" in out
    assert main([*args, "--json"]) == 0
    result = json.loads(capsys.readouterr().out)
    jsonschema.validate(result, json.loads(SCHEMA_FILE.read_text()))
    assert result["by_kind"] == {"message-reworded": 1, "warning-category": 1, "value-changed": 1}
    assert {c["case"]: c["portable_fix"] for c in result["cases"]} == {"first-case": True, "second-case": True}
    main(["--cases", str(history.cases), "upgrade", "2.1.2", "2.4.1", "--reports", str(history.reports)])
    assert "message-reworded" not in capsys.readouterr().out  # 2.1.2 is already past that change


def test_upgrade_fail_on_gates_on_a_kind(history, capsys):
    base = ["--cases", str(history.cases), "upgrade", "2.0.1", "2.4.1", "--reports", str(history.reports)]
    assert main([*base, "--fail-on", "exception-type,starts-raising"]) == 0
    assert main([*base, "--fail-on", "symptom-disappears,warning-category"]) == 1
    assert "has changes of kind warning-category" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args, message",
    [
        (["2.0.1", "2.9.9"], "TO '2.9.9' is not a recorded release"),
        (["2.4.1", "2.0.1"], "FROM 2.4.1 must be an older release than TO 2.0.1"),
        (["2.0.1", "2.4.1", "--fail-on", "loud"], "--fail-on: unknown kind loud"),
        (["2.0.1", "2.4.1", "--device", "cuda"], "no reports for device 'cuda'"),
    ],
)
def test_upgrade_bad_input_is_one_line_and_exit_2(history, capsys, args, message):
    assert main(["--cases", str(history.cases), "upgrade", *args, "--reports", str(history.reports)]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1


def test_claims_say_what_was_observed_inferred_and_unverified(project):
    from torch_pitfalls.loader import load_case
    from torch_pitfalls.matrix.claims import all_claims, spans, what_you_see

    assert spans(["2.0.1", "2.1.2", "2.4.1"], ["1.13.1", "2.0.1", "2.1.2", "2.3.1", "2.4.1"]) == "2.0.1–2.1.2, 2.4.1"
    write(project, "2.0.1", [record(project, "first-case", True), record(project, "second-case", True)])
    write(
        project,
        "2.1.2",
        [
            record(project, "first-case", True),
            record(
                project,
                "second-case",
                False,
                outcome="unverified",
                detail="the symptom needs cuda; this is cpu, and the broken result passes",
            ),
        ],
    )
    m = load_matrix(project.reports, project.cases)
    case = load_case(project.cases / "autograd" / "first_case.py").case
    assert all_claims(case, m) == [
        "cpu: symptom observed on 2.0.1–2.1.2",
        "cuda: the symptom is not observed (no cuda report is recorded)",
        "*: no known lower bound",
    ]
    second = load_case(project.cases / "autograd" / "second_case.py").case
    assert "cpu: unverified on 2.1.2: the symptom needs cuda; this is cpu" in all_claims(second, m)
    inferred = replace(case, affects=(Affects(">=0.4", since="the 0.4.0 release notes"),))
    assert (
        all_claims(inferred, m)[-1]
        == ">=0.4: before 2.0.1, inferred, not observed; the source: the 0.4.0 release notes"
    )
    assert what_you_see(m, "first-case", "cpu") == []  # these records carry no fingerprints


def test_what_you_see_groups_releases_that_look_the_same(history):
    from torch_pitfalls.matrix.claims import what_you_see

    m = load_matrix(history.reports, history.cases)
    assert [span for span, _ in what_you_see(m, "first-case", "cpu")] == ["2.0.1", "2.1.2", "2.4.1"]
    assert what_you_see(m, "second-case", "cpu")[0][0] == "2.0.1–2.1.2"  # 1.0 and 1.0000001: one behaviour


def test_each_release_gets_the_torchvision_that_pins_it():
    from torch_pitfalls.matrix import DEFAULT_VERSIONS
    from torch_pitfalls.matrix.build import case_extras

    assert case_extras("2.13.0") == ["tensorboard", "torchvision==0.28.0", "onnx", "onnxscript"]
    assert case_extras("2.0.1") == ["tensorboard", "torchvision==0.15.2", "onnx", "onnxscript"]
    assert case_extras("1.13.1")[:2] == ["six", "tensorboard"]
    # none pins these (1.13.1's has no cp311 wheel; none pins 2.15.0): tried unpinned, unverified if absent
    assert case_extras("1.13.1")[-3] == case_extras("2.15.0")[-3] == "torchvision"
    assert {v for v in DEFAULT_VERSIONS if case_extras(v)[-3] != "torchvision"} == set(DEFAULT_VERSIONS) - {
        "1.13.1",
        "2.15.0",
    }


def test_a_warning_recategorised_and_reworded_at_once_is_one_change(project):
    before = fp(warns=[("UserWarning", "nn.init.xavier_uniform is now deprecated")])
    after = fp(warns=[("FutureWarning", "`nn.init.xavier_uniform` is now deprecated")])
    write(project, "2.3.1", [fingerprinted(project, "first-case", True, before)])
    write(project, "2.4.1", [fingerprinted(project, "first-case", True, after)])
    (change,) = load_matrix(project.reports, project.cases).changes("first-case")
    assert (change.kind, change.before, change.after) == (
        "warning-category",
        "UserWarning: nn.init.xavier_uniform is now deprecated",
        "FutureWarning: `nn.init.xavier_uniform` is now deprecated",
    )


def test_a_release_where_nothing_ran_is_a_gap_not_a_change(project):
    err = {"type": "ValueError", "message": "crop size larger than image"}
    write(project, "2.12.1", [fingerprinted(project, "first-case", True, fp(err))])
    write(
        project,
        "2.13.0",
        [replace(record(project, "first-case", True, outcome="unverified", detail="needs torchvision"), observed=None)],
    )
    write(project, "2.14.1", [fingerprinted(project, "first-case", True, fp({**err, "message": "crop too big"}))])
    (change,) = load_matrix(project.reports, project.cases).changes("first-case")
    assert (change.kind, change.previous, change.since) == ("message-reworded", "2.12.1", "2.14.1")


def test_a_bound_inside_the_matrix_is_observed_only_when_passing_records_bracket_it(project):
    from torch_pitfalls.loader import load_case
    from torch_pitfalls.matrix.claims import bound_claims

    case = replace(load_case(project.cases / "autograd" / "first_case.py").case, affects=">=2.1")
    write(project, "2.1.2", [record(project, "first-case", True)])
    assert bound_claims(case, load_matrix(project.reports, project.cases)) == [
        ">=2.1: the bound lies inside the matrix but is not bracketed by passing records yet"
    ]
    write(project, "2.0.1", [record(project, "first-case", False)])
    assert bound_claims(case, load_matrix(project.reports, project.cases)) == [
        ">=2.1: the bound is observed: bracketed by 2.0.1 and 2.1.2"
    ]


@pytest.mark.parametrize("versions", ["*", "<0.4", "<=2.0", "!=2.1.0"])
def test_a_range_without_a_lower_bound_says_so(project, versions):
    from torch_pitfalls.loader import load_case
    from torch_pitfalls.matrix.claims import bound_claims

    write(project, "2.1.2", [record(project, "first-case", True)])
    case = replace(load_case(project.cases / "autograd" / "first_case.py").case, affects=versions)
    assert bound_claims(case, load_matrix(project.reports, project.cases)) == [f"{versions}: no known lower bound"]


def test_a_device_independent_case_counts_on_no_other_device(tmp_path):
    """A cuda record of a case whose variants never use the device is neither a reproduction nor
    missing there: its cpu run stands for every device (the H200 run's five such records)."""
    from torch_pitfalls.matrix import DEVICE_INDEPENDENT, load_matrix

    m = load_matrix(ROOT / "reports", ROOT / "cases")
    for case in ("argparse-in-notebook", "tensorboard-writer-not-closed", "ddp-every-rank-prints-and-saves"):
        cuda = m.cell(case, "2.11.0", "cuda:nvidia-h200")
        assert cuda.status == DEVICE_INDEPENDENT and cuda.observed is None
        assert m.cell(case, "2.11.0", "cpu").status != DEVICE_INDEPENDENT
    assert not [w for w in m.problems()["missing"] if w.startswith("argparse-in-notebook [cuda")]
