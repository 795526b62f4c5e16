"""The notebook a learner downloads: the lesson alone, runnable with torch alone.

It holds the case's title and story, a setup cell (the case's imports and, inlined, the few
harness helpers its code calls), the broken and fixed code with the outputs the site's build
recorded, and where the pitfall comes from. The harness's cells (metadata, predicates, checks)
stay in the case module, the ``.py`` download, which imports the project's ``harness`` package.
A case that needs an optional module installs it in its first code cell when the kernel lacks it.
"""

from __future__ import annotations

import ast
import copy
import re
import sys

import nbformat

from docs.site.execute import ExecutedCase
from docs.site.lesson import Lesson, split_lesson
from docs.site.stamp import STAMP_KEY
from torch_pitfalls.matrix import Matrix

WITH_TORCH = {"torch", "functorch"}  # what a torch wheel installs
DISTRIBUTIONS = {"PIL": "pillow"}  # import name -> what pip installs, where they differ


def to_install(sources: list[str], requires: tuple[str, ...]) -> tuple[str, ...]:
    """The modules a notebook imports that neither Python nor torch brings (NumPy and the case's
    optional module among them), for its first code cell to install where missing."""
    found = list(requires)
    for source in sources:
        tree = ast.parse(re.sub(r"%pip .*$", "pass", source, flags=re.M))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found += [a.name.split(".")[0] for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                found.append(node.module.split(".")[0])
    return tuple(m for m in dict.fromkeys(found) if m not in sys.stdlib_module_names and m not in WITH_TORCH)


def run_note(ex: ExecutedCase, lesson: Lesson, installs: tuple[str, ...]) -> str:
    needs = "".join(f" and `{r}`" for r in installs)
    install = " (the next cell installs what is missing)" if installs else ""
    return (
        f"**To run this notebook**: any Jupyter or Colab kernel with torch{needs}{install}; nothing else "
        f"of this project is needed. The outputs below were recorded by the site's build on torch {ex.torch}; "
        "on another release they may differ, which is what the version matrix on the case's page records."
    )


def install_cell(modules: tuple[str, ...]) -> nbformat.NotebookNode:
    lines = ["import importlib.util", ""]
    for name in modules:
        lines += [
            f'if importlib.util.find_spec("{name}") is None:  # this notebook imports {name}',
            f"    %pip install {DISTRIBUTIONS.get(name, name)}",
        ]
    return nbformat.v4.new_code_cell("\n".join(lines))


def download_notebook(ex: ExecutedCase, m: Matrix | None = None) -> nbformat.NotebookNode:
    lesson = split_lesson(ex, m)
    cells = copy.deepcopy(lesson.cells)
    title = cells.pop(0) if cells and cells[0].cell_type == "markdown" else None
    head = [title] if title is not None else []
    installs = to_install([lesson.setup] + [c.source for c in cells if c.cell_type == "code"], lesson.requires)
    head.append(nbformat.v4.new_markdown_cell(run_note(ex, lesson, installs)))
    if installs:
        head.append(install_cell(installs))
    if lesson.setup:
        head.append(nbformat.v4.new_code_cell(lesson.setup.rstrip("\n")))
    cells = head + cells
    cells.append(
        nbformat.v4.new_markdown_cell(
            f"The harness's cells (the metadata, the predicate that recognises the symptom, the near miss it "
            f"must refuse, the fix's check) are in the case module, `{ex.loaded.path.name}`, which runs under "
            "the project's harness."
        )
    )
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
