"""A case's page and downloads, from its executed notebook.

The page is the lesson (``docs.site.lesson``), first: the title, the buttons (downloads, Colab,
source), the story's opening, the imports folded, the broken code and what ``broken("cpu")`` did, why, the fix and what
``fixed("cpu")`` did, a diff of the two where they differ by a few lines, where it comes from.
Then the facts of its metadata, folded ("About this case"), its sources and upstream links, and one section, "How this corpus proves it", holding the
harness's code folded (metadata, predicates, near miss, checks) and what the claims rest on;
then its version-matrix row and the downloads: the case module as it is (it runs under the
harness) and the lesson's notebook (``docs.site.notebook``: it runs with torch alone).
"""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import nbformat

from docs.site.case_links import case_links
from docs.site.execute import ExecutedCase
from docs.site.lesson import split_lesson
from docs.site.linters_page import case_linter_line
from docs.site.matrix_page import case_matrix_section, newest_symptom
from docs.site.notebook import download_notebook
from docs.site.text import code, md
from docs.site.watching_page import Detection, case_detection_line
from torch_pitfalls.matrix import Matrix
from torch_pitfalls.matrix.claims import all_claims


def write_downloads(ex: ExecutedCase, folder: Path, m: Matrix | None = None) -> tuple[str, str]:
    """``<stem>.py`` (the case module) and ``<stem>.ipynb`` (the lesson) into ``folder``; their names."""
    folder.mkdir(parents=True, exist_ok=True)
    stem = ex.loaded.path.stem
    shutil.copyfile(ex.loaded.path, folder / f"{stem}.py")
    nbformat.write(download_notebook(ex, m), folder / f"{stem}.ipynb")
    return f"{stem}.py", f"{stem}.ipynb"


HARNESS_INTRO = (
    "## How this corpus proves it\n\n"
    "The case module is also a test. The harness runs `broken` and `fixed` on every device and every torch "
    "release of the matrix: `symptom` must recognise what the broken code did, the near miss (a look-alike "
    "failure) must not pass for it, and the fix's `check` must accept the fixed result and reject the broken "
    "one. Its code, folded below, is the case's metadata and those predicates; a learner does not need it."
)


def page_notebook(
    ex: ExecutedCase,
    m: Matrix,
    downloads: tuple[str, str],
    lint_bench: dict | None = None,
    detection: Detection | None = None,
) -> nbformat.NotebookNode:
    lesson = split_lesson(ex, m)
    cells = copy.deepcopy(lesson.cells)
    at = 1 if cells and cells[0].cell_type == "markdown" and cells[0].source.lstrip().startswith("# ") else 0
    # The lesson comes first (on a phone too): the title, the buttons, the story's opening, then the
    # broken code. The facts about the case wait, folded, below the lesson.
    head = [_markdown(case_links(ex.loaded.path, downloads))]
    cells[at:at] = head
    if lesson.setup:  # the imports (and any inlined helper), folded as galleries fold set-up
        cells.insert(_first_code(cells, at + len(head)), _folded(lesson.setup))
    cells.append(_markdown(_about(ex, m, lint_bench, detection)))
    cells.append(_markdown(_sources(ex)))
    cells.append(_markdown(HARNESS_INTRO))
    cells.extend(_markdown(text) for text in lesson.harness_prose)
    if lesson.harness_code:
        cells.append(_folded(lesson.harness_code))
    cells.append(_markdown(_evidence(ex, m)))
    cells.append(_markdown(case_matrix_section(m, ex.loaded.id)))
    cells.append(_markdown(_downloads(downloads)))
    for n, cell in enumerate(cells):
        cell.id = f"cell-{n}"
    return nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(ex.notebook.metadata))


def _folded(source: str) -> nbformat.NotebookNode:
    cell = nbformat.v4.new_code_cell(source.rstrip("\n"))
    cell.metadata["tags"] = ["hide-input"]
    return cell


def _markdown(text: str) -> nbformat.NotebookNode:
    return nbformat.v4.new_markdown_cell(text.strip() + "\n")


def _first_code(cells: list, start: int) -> int:
    """Where the lesson's first code cell is, at or after ``start`` (the imports go just before it)."""
    for n in range(start, len(cells)):
        if cells[n].cell_type == "code":
            return n
    return len(cells)


def _about(ex: ExecutedCase, m: Matrix, lint_bench: dict | None, detection: Detection | None) -> str:
    """The case's facts, folded below the lesson: a plain ``<details>`` (no script), a list rather
    than a table so that it reads on a phone in either edition."""
    case, topic = ex.loaded.case, ex.loaded.topic
    tags = ", ".join(code(t) for t in case.tags) or "none"
    affects = "every release" if case.affects_text in ("*", "any") else code(case.affects_text)
    source = str(ex.loaded.path.relative_to(ex.loaded.path.parents[2]))
    facts = [
        f"- Topic: [{topic}](../topics/{topic}.md)",
        f"- Kind: {case.kind}",
        f"- Devices: {', '.join(case.devices)}",
        f"- Symptom expected on torch: {affects}",
        f"- Tags: {tags}",
        f"- Symptom on the newest torch observed: **{md(newest_symptom(m, case.id))}**",
        f"- Case id {code(case.id)}; source {code(source)}",
    ]
    lines = [
        '<details class="case-about">\n<summary>About this case</summary>',
        "\n".join(facts),
        case_linter_line(lint_bench, case.id),
        case_detection_line(detection, case.id),
        "</details>",
    ]
    return "\n\n".join(filter(None, lines))


def _evidence(ex: ExecutedCase, m: Matrix) -> str:
    """Which claims a run observed, which were read in a source, and which nothing here checks."""
    lines = [
        "### What the claims rest on\n",
        "*Observed*: a recorded run of the version matrix saw it. *Inferred*: read in the source named, "
        "not run here. *Unverified*: no run here can tell the fix from the broken code.\n",
    ]
    lines.extend(f"- {md(line)}" for line in all_claims(ex.loaded.case, m))
    return "\n".join(lines)


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
        out.extend(
            f"- <{url}>" if url.startswith(("http://", "https://")) else f"- {md(url)}" for url in case.references
        )
    return "\n".join(out)


def _downloads(downloads: tuple[str, str]) -> str:
    py, ipynb = downloads
    return "\n".join(
        [
            "## Downloads\n",
            f'- <a class="download-ipynb" href="../downloads/{ipynb}" download>{ipynb}</a>: the lesson as a '
            "notebook, with the outputs shown on this page; it runs top to bottom with torch alone.",
            f'- <a class="download-py" href="../downloads/{py}" download>{py}</a>: the case module '
            "(jupytext percent format: a test, a script and a notebook), harness cells included; it imports "
            "the project's `harness` package, so it runs in a checkout of the repository or with the project installed.",
        ]
    )
