"""The pytest plugin, driven as a user drives it: pytest on a planted ``cases/`` folder."""

from __future__ import annotations

import functools
import json

from planting import case_source, run_corpus
from pytest import LineMatcher

from torch_pitfalls.run.report import OUTCOMES, SCHEMA, SCHEMA_VERSION


def test_one_item_per_case_and_device_named_by_id(faults_pytest):
    """In a fresh interpreter, as a user runs it (the other tests here run pytest in-process): the
    faulty corpus's pytest run (``background``), read at one of its planted cases that reproduces."""
    LineMatcher(faults_pytest.proc.stdout.splitlines()).fnmatch_lines(
        [
            "cases/autograd/fault_prints_megabyte.py::fault-prints-megabyte[[]cpu[]] PASSED*",
            "cases/autograd/fault_prints_megabyte.py::fault-prints-megabyte[[]cuda[]] SKIPPED*",
            "*= torch-pitfalls =*",
            "fault-prints-megabyte*reproduced*skipped*",
            "SKIPPED [[]1[]] cases/autograd/fault_prints_megabyte.py:1: CUDA not available*",
        ]
    )


def test_failure_message_says_the_direction_and_what_each_variant_produced(planted, pytester):
    planted.plant("gone-symptom", broken="return torch.tensor(0.0, device=device)")
    result = run_corpus(pytester, "-k", "cpu", inprocess=True)
    result.assert_outcomes(failed=1, deselected=1)
    result.stdout.fnmatch_lines(
        [
            "gone-symptom [[]cpu[]]: mismatch: symptom expected but not seen (torch *",
            "  expected symptom: yes; observed: no",
            "  broken variant: returned tensor(0.)",
            "  fixed variant:  returned tensor(1.)",
        ]
    )


def test_markers_select_by_kind_topic_and_tag(planted, pytester):
    planted.plant("silent-one", tags=("nan",))
    planted.plant("error-one", topic="shapes", kind="error")
    run = functools.partial(run_corpus, pytester, inprocess=True)
    assert run("-m", "silent", "--strict-markers").parseoutcomes()["deselected"] == 2
    result = run("-m", "shapes and cpu", "--strict-markers", "-v")
    result.stdout.fnmatch_lines(["*error-one[[]cpu[]]*"])
    result.assert_outcomes(passed=1, deselected=3)
    assert run("-m", "nan and cpu", "--strict-markers").parseoutcomes()["passed"] == 1
    assert run("-k", "silent-one and cpu").parseoutcomes()["passed"] == 1


# Every way a case file can be unusable, planted side by side in one corpus and collected by one
# pytest run (a run per file would cost a Python and torch start-up each): each is a collection
# error naming its file and what is wrong, none hides the good case, and the run fails.
MALFORMED = {
    "bad-kind": (dict(kind="'noisy'"), "*bad_kind.py: CASE.kind: unknown kind 'noisy'*"),
    "bad-range": (dict(affects="'>=two'"), "*bad_range.py: CASE.affects: '>=two' is not a PEP 440 version range*"),
    "bad-device": (dict(devices="('cpu', 'tpu')"), "*bad_device.py: CASE.devices: unknown device 'tpu'*"),
    "bad-tag": (dict(tags="('has-hyphen',)"), "*bad_tag.py: CASE.tags: 'has-hyphen' is not an identifier*"),
    "bad-entry": (dict(affects="(Affects(versions='~=x'),)"), "*bad_entry.py: CASE.affects: '~=x' is not a PEP 440*"),
    "bad-bound": (
        dict(affects="'>=0.4'"),
        "*bad_bound.py: CASE.affects: the lower bound 0.4 of '>=0.4' is older than*since=*",
    ),
}


def _malformed(case_id: str, fields: dict) -> str:
    text = case_source(case_id).replace("kind='silent'", f"kind={fields.get('kind', repr('silent'))}")
    for name, value in fields.items():
        if name != "kind":
            text = _replace_field(text, name, value)
    return text


def test_every_unusable_case_file_is_a_collection_error_naming_file_and_field(planted, pytester):
    for case_id, (fields, _) in MALFORMED.items():
        planted.plant(case_id, text=_malformed(case_id, fields))
    planted.plant("no-fix", text=case_source("no-fix").split("def fixed")[0])
    planted.plant("no-check", text=case_source("no-check").split("def check")[0])
    planted.plant("right-id", filename="wrong_name.py")
    planted.plant("same-id")
    planted.plant("same-id", topic="shapes")
    planted.plant("broken-syntax", text="def broken(:\n")
    planted.plant("good-case")
    result = run_corpus(pytester, "--continue-on-collection-errors", inprocess=True)
    assert result.ret != 0
    expected = [problem for _, problem in MALFORMED.values()] + [
        "*no_fix.py: fixed: the module must define a function fixed()*",
        "*no_check.py: check: the module must define a function check()*",
        "*wrong_name.py: id: 'right-id' needs the file name right_id.py*",
        "*id: 'same-id' is already declared by*",
        "*broken_syntax.py: import failed: SyntaxError*",
    ]
    for line in expected:  # each on its own: the order of collection errors is pytest's
        result.stdout.fnmatch_lines([line])
    result.stdout.fnmatch_lines(["*ERROR collecting*bad_kind.py*"])
    # good-case and the first same-id load: each passes on cpu and skips on cuda
    result.assert_outcomes(passed=2, skipped=2, errors=len(expected))


def _replace_field(text: str, name: str, value: str) -> str:
    lines = text.splitlines()
    return "\n".join(f"    {name}={value}," if line.startswith(f"    {name}=") else line for line in lines)


def test_the_json_report_holds_what_the_contract_says(planted, pytester):
    planted.plant("nan-thing")
    planted.plant("wrong-fix", fixed="assert False, 'no'")
    result = run_corpus(pytester, "--pitfalls-json", "out/deep/report.json", inprocess=True)
    result.stdout.fnmatch_lines(["report written to out/deep/report.json"])
    report = json.loads((pytester.path / "out/deep/report.json").read_text())
    assert (report["schema"], report["schema_version"]) == (SCHEMA, SCHEMA_VERSION)
    for key in ("torch", "python", "platform", "devices", "started", "finished"):
        assert report[key], key
    assert "cpu" in report["devices"]
    by_key = {(r["case"], r["device"]): r for r in report["records"]}
    assert set(by_key) == {(c, d) for c in ("nan-thing", "wrong-fix") for d in ("cpu", "cuda")}
    good = by_key["nan-thing", "cpu"]
    assert (good["outcome"], good["expected"], good["observed"]) == ("reproduced", True, True)
    assert good["topic"] == "autograd" and good["kind"] == "silent"
    assert isinstance(good["duration_s"], float) and len(good["source_sha256"]) == 64
    assert "nan" in good["broken"] and good["fixed"]
    assert by_key["wrong-fix", "cpu"]["outcome"] == "fix-failed"
    assert {r["outcome"] for r in report["records"]} <= set(OUTCOMES)
    assert report["totals"] == {"reproduced": 1, "fix-failed": 1, "skipped": 2}


def test_a_broken_numpy_bridge_stops_the_session_before_any_case(planted, pytester, monkeypatch):
    import torch

    def no_numpy(array):
        raise RuntimeError("Numpy is not available")

    monkeypatch.setattr(torch, "from_numpy", no_numpy)
    planted.plant("nan-thing")
    result = run_corpus(pytester, inprocess=True)
    assert result.ret == 2
    result.stdout.fnmatch_lines(["*environment: torch * cannot exchange arrays with NumPy*(no case was run)*"])
    assert "passed" not in result.stdout.str() and "failed" not in result.stdout.str()
