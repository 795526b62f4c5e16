"""The docs generator on planted cases: executing cells, failing on a broken case, rebuilding
after an edit, and the performance page's data."""

from __future__ import annotations

import json
import re
import subprocess
import sys
import time

import nbformat
import pytest
from planting import ROOT

pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[test,docs]')")
pytest.importorskip("myst_nb", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from docs.site.bench_page import BenchError, choose_bench, other_devices, performance_page  # noqa: E402
from docs.site.execute import CaseRunError, execute_cases  # noqa: E402
from docs.site.stamp import Stamp  # noqa: E402
from torch_pitfalls import observe  # noqa: E402
from torch_pitfalls.helpers import stretched  # noqa: E402
from torch_pitfalls.loader import load_cases  # noqa: E402

# A case as an author writes one: prose cells, the code, demo cells printing what it produced.
STORY = """\
# %% [markdown]
# # A planted story
#
# {prose}

# %%
import torch
from torch_pitfalls import Case, Source, observe

CASE = Case(id="planted-story", title="A planted story", kind="error", affects="*",
            devices=("cpu",), sources=(Source("planted by the docs tests"),), timeout={timeout})


def broken(device):
    return torch.ones(2, device=device)[5]


def symptom(run):
    return run.raised(IndexError)


def fixed(device):
    value = torch.ones(2, device=device)[1]
    assert value.item() == {fixed_value}
    return value


def check(run, device):
    assert run.value.item() == 1.0

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %%
{extra_cell}

# %%
if __name__ == "__main__":
    print("fixed gives", fixed("cpu").item())
"""


def plant(root, prose="The first version of the prose.", fixed_value="1.0", extra_cell="pass", timeout=60.0):
    folder = root / "cases" / "python"
    folder.mkdir(parents=True, exist_ok=True)
    (root / "reports").mkdir(exist_ok=True)
    path = folder / "planted_story.py"
    path.write_text(STORY.format(prose=prose, fixed_value=fixed_value, extra_cell=extra_cell, timeout=timeout))
    return path


def build(root, out):
    return subprocess.run(
        [sys.executable, "-m", "docs.site.build", "--root", str(root), "--out", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=stretched(300),
    )


def outputs_of(notebook):
    return [o for c in notebook.cells if c.cell_type == "code" for o in c.outputs]


def test_cells_run_in_order_with_real_outputs_and_a_stamp(tmp_path):
    plant(tmp_path)
    [case] = load_cases(tmp_path / "cases")
    [executed] = execute_cases([case], tmp_path, Stamp("9.9.9", {"cpu": "a test CPU"}))
    texts = [o.text for o in outputs_of(executed.notebook) if o.output_type == "stream"]
    assert texts == [f"{observe(case.module.broken, 'cpu')}\n", "fixed gives 1.0\n"]
    assert texts[0].startswith("raised IndexError")
    stamps = [o for o in outputs_of(executed.notebook) if o.output_type == "display_data"]
    assert [s.data["text/plain"] for s in stamps] == ["[output of torch 9.9.9 · cpu (a test CPU)]"] * 2


def test_an_expected_exception_shows_its_traceback_and_the_case_goes_on(tmp_path):
    plant(
        tmp_path,
        extra_cell='# %% tags=["raises-exception"]\nif __name__ == "__main__":\n    raise ValueError("meant to fail")',
    )
    [executed] = execute_cases(load_cases(tmp_path / "cases"), tmp_path)
    errors = [o for o in outputs_of(executed.notebook) if o.output_type == "error"]
    assert [(e.ename, e.evalue) for e in errors] == [("ValueError", "meant to fail")]
    assert "planted_story.py" in "\n".join(errors[0].traceback)  # the module's own file and line
    assert "fixed gives 1.0\n" in [o.get("text") for o in outputs_of(executed.notebook)]


def test_an_unexpected_exception_names_the_case_and_keeps_the_old_site(tmp_path):
    plant(tmp_path, extra_cell='if __name__ == "__main__":\n    raise ValueError("not meant")')
    with pytest.raises(
        CaseRunError, match=r"case planted-story \(.*planted_story\.py:\d+\): cell 3 raised ValueError: not meant"
    ):
        execute_cases(load_cases(tmp_path / "cases"), tmp_path)
    out = tmp_path / "site"
    out.mkdir()
    (out / "index.html").write_text("the previous site")
    result = build(tmp_path, out)
    assert result.returncode == 1
    assert result.stderr.startswith("docs: error: case planted-story")
    assert (out / "index.html").read_text() == "the previous site"


def test_a_cell_tagged_to_raise_that_does_not_fails(tmp_path):
    plant(tmp_path, extra_cell='# %% tags=["raises-exception"]\nx = 1')
    with pytest.raises(
        CaseRunError, match=r"case planted-story .*: cell 4 is tagged raises-exception but raised nothing"
    ):
        execute_cases(load_cases(tmp_path / "cases"), tmp_path)


def test_a_cell_that_hangs_is_stopped_and_named(tmp_path):
    # A cell's limit is twice the case's timeout. The story's other cells must finish within it
    # however busy the machine is, so the timeout comes from the same story run here without the
    # hang (20 times its time, at least 0.25 s); the hang itself only ends when the limit stops it.
    plant(tmp_path)
    started = time.perf_counter()
    execute_cases(load_cases(tmp_path / "cases"), tmp_path)
    timeout = max(0.25, round(20 * (time.perf_counter() - started), 2))
    plant(
        tmp_path,
        timeout=timeout,
        extra_cell='if __name__ == "__main__":\n    import time\n    while True:\n        time.sleep(0.05)',
    )
    limit = re.escape(f"{2 * timeout:g}")
    with pytest.raises(CaseRunError, match=rf"case planted-story .*: cell 3 ran past its {limit} s time limit"):
        execute_cases(load_cases(tmp_path / "cases"), tmp_path)


def test_a_case_that_crashes_the_interpreter_is_named(tmp_path):
    plant(tmp_path, extra_cell='if __name__ == "__main__":\n    import ctypes\n    ctypes.string_at(0)')
    result = build(tmp_path, tmp_path / "site")
    assert result.returncode != 0
    assert re.search(r"planted_story\.py\", line \d+", result.stderr), result.stderr[-2000:]
    assert not (tmp_path / "site").exists()


def test_an_edited_case_shows_on_the_next_build(tmp_path):
    path = plant(tmp_path)
    # a second case, left as it is: the next build reuses its page (docs.site.page_cache)
    other = path.with_name("planted_other.py")
    other.write_text(path.read_text().replace("planted-story", "planted-other").replace("A planted story", "Another"))
    out = tmp_path / "site"
    first = build(tmp_path, out)
    assert first.returncode == 0, first.stderr
    assert "docs: 2 case pages, " in first.stdout, first.stdout
    page = out / "cases" / "planted-story.html"
    assert "The first version of the prose." in page.read_text()
    other_page = (out / "cases" / "planted-other.html").read_text()
    path.write_text(
        STORY.format(
            prose="An edited prose.",
            fixed_value="1.0",
            timeout=60.0,
            extra_cell='if __name__ == "__main__":\n    print("a new output line")',
        )
    )
    second = build(tmp_path, out)
    assert second.returncode == 0, second.stderr
    assert "docs: 2 case pages, 1 of them kept from earlier builds" in second.stdout, second.stdout
    assert (out / "cases" / "planted-other.html").read_text() == other_page
    html = page.read_text()
    assert "An edited prose." in html and "The first version of the prose." not in html
    assert "a new output line" in html
    notebook = nbformat.read(out / "downloads" / "planted_story.ipynb", as_version=4)
    assert any("a new output line" in o.get("text", "") for o in outputs_of(notebook))


def _bench(ratios, date="2026-11-23T12:00:00+00:00"):
    return {
        "benchmarks": [],
        "pitfalls": {
            "torch": "2.13.0+cpu",
            "devices": {"cpu": "a test CPU"},
            "date": date,
            "ratios": ratios,
            "harness": {"overhead_ratio": 1.25},
        },
    }


RATIO = {
    "case": "python-loop-vs-broadcast",
    "device": "cpu",
    "metric": "time",
    "broken": 2.9e-4,
    "fixed": 2.4e-5,
    "unit": "s",
    "ratio": 12.1,
}


def test_performance_page_without_a_benchmark_says_so(tmp_path):
    path, section, notes = choose_bench(tmp_path / "bench.json", tmp_path)
    page, charts = performance_page(path, section, notes, set())
    assert "No benchmark recorded" in page and charts == {}


def test_performance_page_draws_the_newest_committed_benchmark(tmp_path):
    (tmp_path / "bench-old.json").write_text(json.dumps(_bench([{**RATIO, "ratio": 3.0}], "2026-01-01T00:00:00+00:00")))
    (tmp_path / "bench-new.json").write_text(json.dumps(_bench([RATIO])))
    (tmp_path / "bench.json").write_text(json.dumps({"benchmarks": []}))  # an older `make bench`: no section
    path, section, notes = choose_bench(tmp_path / "bench.json", tmp_path)
    page, charts = performance_page(path, section, notes, {"python-loop-vs-broadcast"})
    assert path.name == "bench-new.json"
    assert "12.1×" in page and "a test CPU" in page and "2026-11-23" in page and "1.25×" in page
    assert "`bench.json` has no `pitfalls` section" in page
    svg = charts["performance.svg"]
    assert list(charts) == ["performance.svg"] and svg.startswith(b"<?xml") and b"python-loop-vs-broadcast" in svg


def test_a_gpu_run_gets_a_section_of_its_own_beside_the_cpu_lane(tmp_path):
    (tmp_path / "bench-cpu.json").write_text(json.dumps(_bench([RATIO])))
    (tmp_path / "bench-cpu-old.json").write_text(json.dumps(_bench([RATIO], "2026-01-01T00:00:00+00:00")))
    assert (
        other_devices(*choose_bench(tmp_path / "bench.json", tmp_path)[:2], tmp_path) == []
    )  # an older CPU run adds nothing
    cuda = {**RATIO, "device": "cuda", "ratio": 48.7}
    gpu = _bench([cuda, {**RATIO, "ratio": 1.2}], "2026-11-26T04:06:00+00:00")  # newer, and measured the CPU too
    gpu["pitfalls"]["devices"] = {"cpu": "a test CPU", "cuda": "a test GPU"}
    (tmp_path / "bench-gpu.json").write_text(json.dumps(gpu))
    (tmp_path / "bench-gpu-old.json").write_text(
        json.dumps(_bench([{**cuda, "ratio": 9.0}], "2026-01-01T00:00:00+00:00"))
    )
    path, section, notes = choose_bench(tmp_path / "bench.json", tmp_path)
    others = other_devices(path, section, tmp_path)
    assert path.name == "bench-cpu.json"  # the CPU lane leads, though the GPU's run is newer
    assert [p.name for p, _ in others] == ["bench-gpu.json"]  # the newest run of the other device
    page, charts = performance_page(path, section, notes, set(), others)
    assert list(charts) == ["performance.svg", "performance-2.svg"] and b"cuda" in charts["performance-2.svg"]
    head, gpu_part = page.split("## On cuda")
    assert "12.1×" in head and "48.7×" not in head
    assert "a test GPU" in gpu_part and "48.7×" in gpu_part and "9×" not in gpu_part


def test_a_malformed_benchmark_names_the_file_and_field(tmp_path):
    bad = {k: v for k, v in RATIO.items() if k != "ratio"}
    (tmp_path / "bench.json").write_text(json.dumps(_bench([bad])))
    with pytest.raises(BenchError, match=r"bench\.json: pitfalls\.ratios\[0\]\.ratio: missing"):
        choose_bench(tmp_path / "bench.json", tmp_path)
    (tmp_path / "bench.json").write_text('{"pitfalls": ')
    with pytest.raises(BenchError, match=r"bench\.json: cannot be read as JSON"):
        choose_bench(tmp_path / "bench.json", tmp_path)


def test_each_cell_is_stamped_with_the_devices_it_observed_on(tmp_path):
    """`observe` is bound once, by the import cell; later cells' calls must still stamp their own
    cell, not the import cell's."""
    plant(tmp_path, extra_cell='if __name__ == "__main__":\n    print(observe(fixed, "meta"))')
    [executed] = execute_cases(load_cases(tmp_path / "cases"), tmp_path, Stamp("9.9.9", {"cpu": "a test CPU"}))
    stamped = [
        o.metadata["torch_pitfalls"]["devices"]
        for o in outputs_of(executed.notebook)
        if "torch_pitfalls" in o.get("metadata", {})
    ]
    assert stamped == [["cpu"], ["meta"], ["cpu"]]


# A corpus lacking cases that the records name: the pages read from those records (the lint bench,
# the watcher's proofs and detectors, the matrix, the benchmarks) link only the cases it has.
PART = ("backward-twice", "nan-grad-through-mask", "weight-norm-deprecated")
LINK = re.compile(
    r"\]\((?:\.\./)?cases/([\w-]+)\.ipynb\)|\bcases/([\w-]+)\.html\b|<cases/([\w-]+)>|^\.\./cases/([\w-]+)$", re.M
)


def test_pages_from_other_records_link_only_the_cases_the_corpus_has(tmp_path):
    import shutil

    from docs.site.build import write_sources
    from docs.site.learner_pages import symptoms_for
    from docs.site.linters_page import load_bench
    from docs.site.watching_page import load_detection
    from torch_pitfalls.loader import find_case_files
    from torch_pitfalls.matrix import load_matrix

    reports = ROOT / "reports"
    for path in find_case_files(ROOT / "cases"):
        if path.stem.replace("_", "-") in PART:
            (tmp_path / "cases" / path.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, tmp_path / "cases" / path.parent.name / path.name)
    cases = [lc for lc in load_cases(ROOT / "cases") if lc.id in PART]
    bench = load_bench(reports)
    # what the records name beyond this corpus: a case of the bench's table, and the case of rule PTF101
    assert "zero-grad-set-to-none" in {row["case"] for row in bench["table"]}
    matrix = load_matrix(reports, tmp_path / "cases")
    detection = load_detection(reports, bench, tmp_path / "cases", matrix)
    path, section, notes = choose_bench(ROOT / "build" / "bench.json", reports)
    src, extra = tmp_path / "src", tmp_path / "extra"
    write_sources(
        src,
        extra,
        cases,
        matrix,
        (path, section, notes, other_devices(path, section, reports), {}),
        bench,
        tmp_path / "cases",
        symptoms_for(tmp_path, cases),
        detection,
    )
    linked = {
        page.relative_to(src).as_posix(): {next(filter(None, m.groups())) for m in LINK.finditer(page.read_text())}
        for page in src.rglob("*.md")
    }
    assert {case for found in linked.values() for case in found} == set(PART)  # each linked, none other
    linters = (src / "linters.md").read_text(encoding="utf-8")
    assert "`zero-grad-set-to-none`" in linters and "PTF101" in linters  # named, not linked
    assert "[weight-norm-deprecated](cases/weight-norm-deprecated.ipynb)" in linters
