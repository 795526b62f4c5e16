"""Each case page is the lesson, read from the site the suite builds once (``site``, in the
background): the broken code and what ``broken("cpu")`` does, then why, then the fix and what it
does, the harness's code folded at the end; outputs as a person sees them; the downloaded
notebook needs torch alone. Plus the cleaning and the build's check, on small inputs."""

from __future__ import annotations

import ast
import functools
import html
import json
import re
import sys
from pathlib import Path

import nbformat
import pytest
from planting import ROOT
from pyflakes.checker import Checker  # flake8's, in the test extra
from pyflakes.messages import UndefinedName

pytest.importorskip("myst_nb", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from docs.site.outputs import clean, error_text, pretty  # noqa: E402
from docs.site.outputs_check import problems  # noqa: E402
from torch_pitfalls import observe  # noqa: E402
from torch_pitfalls.loader import load_case  # noqa: E402

HARNESS_CODE = re.compile(
    r'def (?:symptom|check|near_miss|stable)\(|CASE = Case\(|print\(observe\((?:broken|fixed), "cpu"\)\)'
)
CELL = re.compile(r'<div class="cell((?: tag_[\w-]+)*) docutils container"[^>]*>')


def case_path(case_id: str) -> Path:
    return next(ROOT.glob(f"cases/*/{case_id.replace('-', '_')}.py"))


def text_of(markup: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", markup))


def cells(page: str) -> list[dict]:
    """The page's code cells in order: tags, input and output text, and where each starts."""
    found = list(CELL.finditer(page))
    out = []
    for n, m in enumerate(found):
        end = found[n + 1].start() if n + 1 < len(found) else len(page)
        block = page[m.end() : end]
        ends = [at for at in (block.find(tag) for tag in ("<section", "<p>", '<div class="highlight-diff')) if at >= 0]
        block = block[: min(ends)] if ends else block  # the prose after the cell is not the cell
        source, _, output = block.partition('<div class="cell_output docutils container">')
        out.append(
            {
                "tags": m.group(1).split(),
                "input": text_of(source).strip(),
                "output": text_of(output).strip(),
                "at": m.start(),
            }
        )
    return out


@pytest.fixture(scope="session")
def pages(site) -> dict[str, str]:
    return {p.stem: p.read_text(encoding="utf-8") for p in (site / "cases").glob("*.html")}


@pytest.fixture(scope="session")
def corpus(site_corpus):
    """The cases the site was built from (a sample in `make test`, all of them in `make docs`)."""
    return site_corpus.cases


@functools.cache
def cpu_reports(reports: Path) -> tuple[dict, ...]:
    return tuple(json.loads(p.read_text()) for p in reports.glob("torch-*-cpu.json"))


def newest_record(reports: Path, case_id: str, name: str) -> tuple[str, str]:
    """(the release, the text of ``name``) of the newest cpu report whose record of the case has
    one, read from the report files themselves (those the site was built from: ``reports``)."""
    found = []
    for report in cpu_reports(reports):
        for record in report["records"]:
            if record["case"] == case_id and record.get(name):
                found.append((tuple(int(x) for x in report["torch"].split("+")[0].split(".")), record[name]))
    version, text = max(found)
    return ".".join(map(str, version)), text


def call_output(page: str, name: str) -> str:
    """What the page shows under ``name("cpu")``, without the stamp line."""
    [cell] = [c for c in cells(page) if re.match(rf'(?:try:\s+)?{name}\("cpu"\)', c["input"])]
    return "\n".join(
        line
        for line in cell["output"].splitlines()
        if line.strip() and not line.startswith(("output of torch", "recorded by the version matrix"))
    )


def test_every_page_shows_broken_then_its_output_then_why_and_folds_the_harness_at_the_end(pages, corpus):
    assert len(pages) == len(corpus)
    for case_id, page in pages.items():
        proves = page.find('<section id="how-this-corpus-proves-it"')
        why = page.find('<section id="why"')
        assert 0 < why < proves, f"{case_id}: no Why before 'How this corpus proves it'"
        shown = [c for c in cells(page) if "tag_hide-input" not in c["tags"]]
        broken = [c for c in shown if "def broken(" in c["input"]]
        calls = [c for c in shown if re.match(r'(?:try:\s+)?broken\("cpu"\)', c["input"])]
        assert broken and calls and broken[0]["at"] < calls[0]["at"] < why, case_id
        assert calls[0]["output"], f"{case_id}: broken('cpu') shows no output"
        for c in cells(page):
            plumbing = HARNESS_CODE.search(c["input"])
            if plumbing:
                assert c["at"] > proves and "tag_hide-input" in c["tags"], f"{case_id}: {plumbing[0]} in the lesson"


def test_helpers_the_broken_code_calls_are_shown_not_folded(pages):
    page = pages["python-loop-vs-broadcast"]
    shown = "\n".join(c["input"] for c in cells(page) if "tag_hide-input" not in c["tags"])
    folded = "\n".join(c["input"] for c in cells(page) if "tag_hide-input" in c["tags"])
    assert "def subtract_in_a_loop(" in shown and "def profiled(" in shown
    assert "def subtract_in_a_loop(" not in folded
    assert "def ops_called(" in folded  # the harness's helper, inlined in the folded set-up


@pytest.mark.parametrize("case_id", ["nan-grad-through-mask", "cross-entropy-after-softmax", "backward-twice"])
def test_outputs_are_what_the_call_gives_here(pages, case_id):
    """The value as Jupyter prints it, or the exception's line: computed here, found on the page."""
    module = load_case(case_path(case_id)).module
    for name in ("broken", "fixed"):
        run = observe(getattr(module, name), "cpu")
        expected = error_text(run.error) if run.error is not None else pretty(run.value)
        assert call_output(pages[case_id], name) == clean(expected).strip(), f"{case_id}: {name}"


def test_a_missing_optional_module_shows_the_matrix_record_stamped_with_its_release(pages, site_corpus):
    for case_id in ("topilimage-float64", "transforms-expect-pil", "random-crop-larger-than-image"):
        page = pages[case_id]
        for name in ("broken", "fixed"):
            version, text = newest_record(site_corpus.root / "reports", case_id, name)
            expected = text.removeprefix("returned ").removeprefix("raised ")
            assert call_output(page, name) == expected, f"{case_id}: {name}"
            assert f"recorded by the version matrix on torch {version} (reports/torch-{version}-cpu.json)" in text_of(
                page
            )
        assert "No module named" not in "\n".join(c["output"] for c in cells(page))


def test_tensorboard_runs_in_the_build(pages, site_corpus):
    """tensorboard imports here: the page shows the build's own run, which the matrix also recorded."""
    page = pages["tensorboard-writer-not-closed"]
    assert "output of torch" in text_of(page)
    _, recorded = newest_record(site_corpus.root / "reports", "tensorboard-writer-not-closed", "broken")
    assert call_output(page, "broken") == recorded.removeprefix("returned ")


def test_a_diff_where_broken_and_fixed_differ_by_a_few_lines(pages):
    diff = text_of(pages["nan-grad-through-mask"])
    assert "-    y = x / den" in diff and "+    keep = den != 0" in diff and "+def fixed(device):" in diff
    # every line of python-loop-vs-broadcast's pair differs: the helpers carry the difference, no diff
    assert "--- broken" not in text_of(pages["python-loop-vs-broadcast"])


def test_downloaded_notebooks_need_torch_alone(site, corpus):
    """No import of the project, no install of it; whatever else a notebook imports beyond Python
    and torch (the case's optional module, NumPy) installed by its first code cell where missing."""
    requires = {lc.path.stem: lc.case.requires for lc in corpus}
    notebooks = sorted((site / "downloads").glob("*.ipynb"))
    assert len(notebooks) == len(requires)
    for path in notebooks:
        nb = nbformat.read(path, as_version=4)
        code = [c.source for c in nb.cells if c.cell_type == "code"]
        assert nb.cells[1].source.startswith("**To run this notebook**"), path.name
        installed = {m for c in code for m in re.findall(r'find_spec\("([\w.]+)"\) is None', c)}
        assert {r.split(".")[0] for r in requires[path.stem]} - {"torch"} <= installed, path.name
        program = ast.parse("\n".join(re.sub(r"%pip .*$", "pass", c, flags=re.M) for c in code))
        undefined = [str(m) for m in Checker(program).messages if isinstance(m, UndefinedName)]
        assert not undefined, f"{path.name}: {undefined}"  # a name only the harness's cells defined
        for source in code:
            assert not re.search(r"^\s*(?:from|import)\s+harness\b|torch-pitfalls", source, re.M), path.name
            tree = ast.parse(re.sub(r"%pip .*$", "pass", source, flags=re.M))
            names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
            names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
            missing = names - set(sys.stdlib_module_names) - {"torch", "functorch"} - installed
            assert not missing, f"{path.name}: imports {sorted(missing)} without installing them"
    nbformat.validate(nbformat.read(site / "downloads" / "nan_grad_through_mask.ipynb", as_version=4))
    vision = nbformat.read(site / "downloads" / "topilimage_float64.ipynb", as_version=4)
    assert "%pip install torchvision" in vision.cells[2].source
    plain = nbformat.read(site / "downloads" / "nan_grad_through_mask.ipynb", as_version=4)
    assert "%pip" not in "".join(c.source for c in plain.cells)


def test_cleaning_removes_colour_codes_profiler_lines_and_this_machines_paths():
    import sysconfig

    purelib = sysconfig.get_paths()["purelib"]
    noisy = (
        f"\x1b[1mdo those steps\x1b[0m\nUSDT:2026-11-25 22:58:25 22348:22348 SyncActivityProfilerHandler.cpp:52] "
        f"profiler_start\n{purelib}/torch/autograd/gradcheck.py:2124: UserWarning: x\n{ROOT}/cases/a.py line 3\n"
    )
    assert clean(noisy) == (
        "do those steps\n<site-packages>/torch/autograd/gradcheck.py:2124: UserWarning: x\ncases/a.py line 3\n"
    )
    # Kineto writes past Python's buffer: its line can land after a value printed without its newline
    landed = "tensor([1., 2.]))USDT:2026-11-26 02:59:40 18612:18612 SyncActivityProfilerHandler.cpp:59] profiler_stop\n"
    assert clean(landed) == "tensor([1., 2.]))"


def test_the_build_check_names_each_page_that_shows_the_machinery(tmp_path):
    site = tmp_path / "site"
    (site / "cases").mkdir(parents=True)
    (site / "downloads").mkdir()
    (site / "cases" / "ok.html").write_text("<p>tensor([nan, 1.])</p>")
    (site / "cases" / "ansi.html").write_text("<pre>UnpicklingError: \x1b[1mdo those steps</pre>")
    (site / "cases" / "fingerprint.html").write_text(
        "<code><span>returns</span> <span>{'type':</span> <span>'Tensor',</span></code>"
    )
    (site / "cases" / "noise.html").write_text("<pre>USDT:2026 profiler_start</pre>")
    nb = nbformat.v4.new_notebook(metadata={"torch_pitfalls": {"case": "needs-vision"}})
    nb.cells.append(
        nbformat.v4.new_code_cell(
            "broken('cpu')",
            outputs=[
                nbformat.v4.new_output(
                    "stream", name="stdout", text=f"ModuleNotFoundError: No module named 'no_such_vision'\n{ROOT}/x.py"
                )
            ],
        )
    )
    nbformat.write(nb, site / "downloads" / "needs_vision.ipynb")
    found = problems(site, requires={"needs-vision": ("no_such_vision",)})
    # a module this machine has, shown missing: the case blocks it on purpose (its own story), as
    # onnx-export-dynamo-default hides onnxscript from a child interpreter
    blocked = nbformat.v4.new_notebook(metadata={"torch_pitfalls": {"case": "blocks-json"}})
    blocked.cells.append(
        nbformat.v4.new_code_cell(
            "broken('cpu')",
            outputs=[
                nbformat.v4.new_output("stream", name="stdout", text="ModuleNotFoundError: No module named 'json'\n")
            ],
        )
    )
    nbformat.write(blocked, tmp_path / "blocks_json.ipynb")
    shown = problems(site, [tmp_path / "blocks_json.ipynb"], requires={"blocks-json": ("json",)})
    assert not [line for line in shown if "blocks_json" in line]
    assert [line.split(" (")[0] for line in found] == [
        "cases/ansi.html: an ANSI escape",
        "cases/fingerprint.html: a fingerprint dict",
        "cases/noise.html: profiler noise",
        "downloads/needs_vision.ipynb: a path of the build machine",
        "downloads/needs_vision.ipynb: a missing optional module as a case's output",
    ]
