"""The notebook a learner downloads: the lesson alone, runnable with torch alone.

It holds the case's title and story, a setup cell (the case's imports and, inlined, the few
harness helpers its code calls), the broken and fixed code with the outputs the site's build
recorded, and where the pitfall comes from. The harness's cells (metadata, predicates, checks)
stay in the case module, the ``.py`` download, which imports the project's ``harness`` package.
A case that needs an optional module installs it in its first code cell when the kernel lacks it.
"""
from __future__ import annotations

import copy

import nbformat

from harness.matrix import Matrix

from docs.site.execute import ExecutedCase
from docs.site.lesson import Lesson, split_lesson
from docs.site.stamp import STAMP_KEY


def run_note(ex: ExecutedCase, lesson: Lesson) -> str:
    needs = "".join(f" and `{r}`" for r in lesson.requires)
    install = " (the next cell installs it where it is missing)" if lesson.requires else ""
    return (f"**To run this notebook**: any Jupyter or Colab kernel with torch{needs}{install}; nothing else "
            f"of this project is needed. The outputs below were recorded by the site's build on torch {ex.torch}; "
            "on another release they may differ, which is what the version matrix on the case's page records.")


def install_cell(requires: tuple[str, ...]) -> nbformat.NotebookNode:
    lines = ["import importlib.util", ""]
    for name in requires:
        lines += [f'if importlib.util.find_spec("{name}") is None:  # this case needs {name}',
                  f"    %pip install {name}"]
    return nbformat.v4.new_code_cell("\n".join(lines))


def download_notebook(ex: ExecutedCase, m: Matrix | None = None) -> nbformat.NotebookNode:
    lesson = split_lesson(ex, m)
    cells = copy.deepcopy(lesson.cells)
    title = cells.pop(0) if cells and cells[0].cell_type == "markdown" else None
    head = [title] if title is not None else []
    head.append(nbformat.v4.new_markdown_cell(run_note(ex, lesson)))
    if lesson.requires:
        head.append(install_cell(lesson.requires))
    if lesson.setup:
        head.append(nbformat.v4.new_code_cell(lesson.setup.rstrip("\n")))
    cells = head + cells
    cells.append(nbformat.v4.new_markdown_cell(
        f"The harness's cells (the metadata, the predicate that recognises the symptom, the near miss it "
        f"must refuse, the fix's check) are in the case module, `{ex.loaded.path.name}`, which runs under "
        "the project's harness."))
    count = 0
    for n, cell in enumerate(cells):
        cell.id = f"cell-{n}"  # deterministic, and unique after cells were cut and added
        if cell.cell_type == "code":
            count += 1
            cell.execution_count = count
            for out in cell.outputs:
                if out.output_type == "execute_result":
                    out.execution_count = count
    nb = nbformat.v4.new_notebook(cells=cells, metadata=copy.deepcopy(ex.notebook.metadata))
    nb.metadata[STAMP_KEY] = dict(nb.metadata.get(STAMP_KEY, {}))
    return nb
