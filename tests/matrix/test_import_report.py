"""`pitfalls import-report`: a run made on someone else's GPU is checked, filed under reports/ by
torch, device kind and model, and shown in `pitfalls matrix --device cuda:<model>` and on the site
with where it ran. The CUDA report here is synthetic: a test fixture, never a file in reports/."""

from __future__ import annotations

import copy
import datetime as dt
import json

import pytest
from planting import REPORT_ENV, case_sha

from torch_pitfalls.cli import main
from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import load_matrix
from torch_pitfalls.run.report import Record, build_report, write_report

H100 = {
    "model": "NVIDIA H100 80GB HBM3",
    "count": 1,
    "capability": "9.0",
    "memory_gib": 79.1,
    "driver_api": 12080,
    "cudnn": 90100,
}


def gpu_report(corpus, path, torch="2.11.0+cu128", stale=(), outcome="reproduced"):
    """A contributed full run: CUDA ran, the CPU lane was left out (skipped)."""
    env = copy.deepcopy(REPORT_ENV)
    env.update(torch_cuda="12.8", devices={"cpu": "a CPU", "cuda": H100["model"]})
    env["provenance"]["accelerator"] = H100
    env["provenance"]["torch"].update(
        version=torch,
        cuda="12.8",
        install={
            "version": torch,
            "wheel_tags": ["cp312-cp312-manylinux_2_28_x86_64"],
            "installer": "pip",
            "source": "index",
        },
    )
    records = []
    for case_id in ("first-case", "second-case"):
        digest = "0" * 64 if case_id in stale else case_sha(corpus, case_id)
        records += [
            Record(
                case=case_id,
                topic="autograd",
                kind="silent",
                device="cuda",
                outcome=outcome,
                expected=True,
                observed=True,
                source_sha256=digest,
                detail="a detail",
            ),
            Record(
                case=case_id,
                topic="autograd",
                kind="silent",
                device="cpu",
                outcome="skipped",
                expected=False,
                observed=None,
                source_sha256=digest,
            ),
        ]
    report = build_report(records, dt.datetime(2026, 11, 23, tzinfo=dt.timezone.utc), {"torch": torch, **env})
    return write_report(report, path)


def pitfalls(project, *args):
    return main(["--cases", str(project.cases), *args])


def test_a_contributed_gpu_run_is_filed_by_release_kind_and_model(project, tmp_path, capsys):
    src = gpu_report(project, tmp_path / "my-report.json", stale=("second-case",))
    assert pitfalls(project, "import-report", str(src), "--reports", str(project.reports)) == 0
    out = capsys.readouterr().out
    filed = project.reports / "torch-2.11.0-cuda-nvidia-h100-80gb-hbm3.json"
    assert [p.name for p in project.reports.iterdir()] == [filed.name]  # the skipped CPU lane is not filed
    assert "stale (recorded from another text of the case" in out and "second-case" in out
    report = json.loads(filed.read_text())
    assert {r["device"] for r in report["records"]} == {"cuda"}
    assert report["imported"]["stale"] == ["second-case"] and report["totals"] == {"reproduced": 2}

    m = load_matrix(project.reports, project.cases)
    device = "cuda:nvidia-h100-80gb-hbm3"
    assert m.devices == [device]
    assert m.cell("first-case", "2.11.0", device).status == "reproduced"
    assert m.cell("second-case", "2.11.0", device).status == "stale"  # marked, not dropped

    assert pitfalls(project, "matrix", "--reports", str(project.reports), "--device", device) == 0
    table = capsys.readouterr().out
    assert f"torch releases on {device}" in table
    assert "NVIDIA H100 80GB HBM3 (compute capability 9.0, 79.1 GiB, driver CUDA API 12.8, cuDNN 90100)" in table
    assert "cp312-cp312-manylinux_2_28_x86_64" in table
    row = next(line for line in table.splitlines() if line.startswith("second-case"))
    assert "~" in row


def test_the_site_shows_contributed_cells_with_their_provenance(project, tmp_path):
    from docs.site.matrix_page import case_matrix_section, matrix_page

    src = gpu_report(project, tmp_path / "my-report.json", stale=("second-case",))
    assert pitfalls(project, "import-report", str(src), "--reports", str(project.reports)) == 0
    m = load_matrix(project.reports, project.cases)
    page = matrix_page(m, load_cases(project.cases))
    assert "## cuda:nvidia-h100-80gb-hbm3" in page and "NVIDIA H100 80GB HBM3 (compute capability 9.0" in page
    # one release of a device: said as such, not as "0 of N cases changed between releases"
    assert "## cuda:nvidia-h100-80gb-hbm3: one release observed (2.11.0)" in page
    assert "### Observed on 2.11.0 (" in page and "changed between releases" not in page.split("## cuda:")[1]
    assert "no cuda report is recorded" not in page  # a contributed run covers the kind
    section = case_matrix_section(m, "second-case")
    assert "<th>cuda:nvidia-h100-80gb-hbm3</th>" in section and "stale" in section.split("cuda:nvidia-h100")[1]


@pytest.mark.parametrize(
    "spoil, problem",
    [
        (lambda r: r.update(schema_version=2), "schema at schema_version"),
        (lambda r: r["records"][0].update(case="no-such-case"), "cases this checkout does not have: no-such-case"),
        (lambda r: r.update(torch="2.16.0.dev20261120+cu130"), "is not a release of the matrix"),
        (lambda r: [x.update(outcome="skipped") for x in r["records"]], "no device ran"),
    ],
    ids=["old-schema", "unknown-case", "unknown-release", "nothing-ran"],
)
def test_a_report_that_cannot_be_trusted_is_refused_whole(project, tmp_path, capsys, spoil, problem):
    src = gpu_report(project, tmp_path / "my-report.json")
    report = json.loads(src.read_text())
    spoil(report)
    report["totals"] = {}
    for r in report["records"]:
        report["totals"][r["outcome"]] = report["totals"].get(r["outcome"], 0) + 1
    src.write_text(json.dumps(report))
    assert pitfalls(project, "import-report", str(src), "--reports", str(project.reports)) == 2
    err = capsys.readouterr().err
    assert problem in err and len(err.strip().splitlines()) == 1
    assert list(project.reports.iterdir()) == []  # nothing written


def test_a_truncated_file_and_an_existing_report_are_refused(project, tmp_path, capsys):
    src = gpu_report(project, tmp_path / "my-report.json")
    assert pitfalls(project, "import-report", str(src), "--reports", str(project.reports)) == 0
    before = {p.name: p.read_bytes() for p in project.reports.iterdir()}
    assert pitfalls(project, "import-report", str(src), "--reports", str(project.reports)) == 2
    assert "exists (--replace" in capsys.readouterr().err
    cut = tmp_path / "cut.json"
    cut.write_text(src.read_text()[:200])
    assert pitfalls(project, "import-report", str(cut), "--reports", str(project.reports), "--replace") == 2
    assert "not valid JSON" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in project.reports.iterdir()} == before
