"""A case's page and downloads, from its executed notebook.

The page is the case's own cells in its own order (prose, code, the outputs of this build's
run), with the facts of its metadata after the title and, at the end, its sources, upstream
links, version-matrix row and downloads. The downloads are the module as it is and the executed
notebook, written by jupytext.
"""
from __future__ import annotations

import copy
import shutil
from pathlib import Path

import jupytext
import nbformat

from harness.matrix.claims import all_claims
from harness.matrix import Matrix

from docs.site.execute import ExecutedCase
from docs.site.linters_page import case_linter_line
from docs.site.matrix_page import case_matrix_section, newest_symptom
from docs.site.text import code, md
from docs.site.watching_page import Detection, case_detection_line


def write_downloads(ex: ExecutedCase, folder: Path) -> tuple[str, str]:
    """``<stem>.py`` and ``<stem>.ipynb`` into ``folder``; their file names."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = ex.loaded.path.stem
    shutil.copyfile(ex.loaded.path, folder / f"{stem}.py")
    jupytext.write(download_notebook(ex), folder / f"{stem}.ipynb", fmt="ipynb")
    return f"{stem}.py", f"{stem}.ipynb"


INSTALL_NOTE = (
    "**To run this notebook** in your own Jupyter: in an environment that has the torch you want to test, "
    "`pip install torch-pitfalls` (the harness that the first code cell imports, and the corpus; it never "
    "installs or replaces torch), then run all cells. Every output below was recorded by the site's build."
)


def download_notebook(ex: ExecutedCase) -> nbformat.NotebookNode:
    """The executed notebook as a reader downloads it: first, how to run it outside this project."""
    nb = copy.deepcopy(ex.notebook)
    nb.cells.insert(0, _markdown(INSTALL_NOTE))
    return nb


def page_notebook(ex: ExecutedCase, m: Matrix, downloads: tuple[str, str], lint_bench: dict | None = None,
                  detection: Detection | None = None) -> nbformat.NotebookNode:
    nb = copy.deepcopy(ex.notebook)
    cells = nb.cells
    at = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ") else 0
    for cell in cells:  # the metadata is the facts table above: its code is folded, as galleries fold set-up
        if cell.cell_type == "code" and "CASE = Case(" in cell.source:
            tags = cell.metadata.setdefault("tags", [])
            if "hide-input" not in tags:
                tags.append("hide-input")
    lines = [_facts(ex, m, downloads), case_linter_line(lint_bench, ex.loaded.id),
             case_detection_line(detection, ex.loaded.id)]
    cells.insert(at, _markdown("\n\n".join(filter(None, lines))))
    cells.append(_markdown(_evidence(ex, m)))
    cells.append(_markdown(_sources(ex)))
    cells.append(_markdown(case_matrix_section(m, ex.loaded.id)))
    cells.append(_markdown(_downloads(downloads)))
    return nb


def _markdown(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip() + "\n")


def _facts(ex: ExecutedCase, m: Matrix, downloads: tuple[str, str]) -> str:
    case, topic = ex.loaded.case, ex.loaded.topic
    tags = ", ".join(code(t) for t in case.tags) or "none"
    return "\n".join([
        "| topic | kind | devices | symptom expected on torch | tags |",
        "|---|---|---|---|---|",
        f"| [{topic}](../topics/{topic}.md) | {case.kind} | {', '.join(case.devices)} | {code(case.affects_text)} | {tags} |",
        "",
        f"Symptom on the newest torch observed: **{md(newest_symptom(m, case.id))}**. "
        f"Case id {code(case.id)}; source {code(str(ex.loaded.path.relative_to(ex.loaded.path.parents[2])))}; "
        f"{_links(downloads)}.",
    ])


def _evidence(ex: ExecutedCase, m: Matrix) -> str:
    """Which claims a run observed, which were read in a source, and which nothing here checks."""
    lines = ["## What the claims rest on\n",
             "*Observed*: a recorded run of the version matrix saw it. *Inferred*: read in the source named, "
             "not run here. *Unverified*: no run here can tell the fix from the broken code.\n"]
    lines.extend(f"- {md(line)}" for line in all_claims(ex.loaded.case, m))
    return "\n".join(lines)


def _links(downloads: tuple[str, str]) -> str:
    py, ipynb = downloads
    return (f'download <a class="download-py" href="../downloads/{py}" download>{py}</a> or '
            f'<a class="download-ipynb" href="../downloads/{ipynb}" download>{ipynb}</a>')


def _sources(ex: ExecutedCase) -> str:
    case = ex.loaded.case
    out = ["## Sources\n"]
    for src in case.sources:
        line = f"- {md(src.title)}"
        if src.passage:
            line += f", {md(src.passage)}"
        if src.url:
            line += f" <{src.url}>"
        out.append(line)
    if case.references:
        out.append("\n## Upstream links\n")
        out.extend(f"- <{url}>" if url.startswith(("http://", "https://")) else f"- {md(url)}" for url in case.references)
    return "\n".join(out)


def _downloads(downloads: tuple[str, str]) -> str:
    py, ipynb = downloads
    return "\n".join([
        "## Downloads\n",
        f'- <a class="download-py" href="../downloads/{py}" download>{py}</a>: the case module '
        "(jupytext percent format: a test, a script and a notebook).",
        f'- <a class="download-ipynb" href="../downloads/{ipynb}" download>{ipynb}</a>: the same as a '
        "notebook, with the outputs shown on this page.",
    ])
