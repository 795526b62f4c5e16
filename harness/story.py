"""A case module read as a story in a terminal: its prose, then its code, cell by cell."""
from __future__ import annotations

import textwrap
from pathlib import Path


def render_story(path: Path, width: int = 100) -> str:
    import jupytext  # the percent-format reader; imported here so running cases never needs it

    notebook = jupytext.read(path, fmt="py:percent")
    out = []
    for cell in notebook.cells:
        text = cell.source.strip()
        if not text:
            continue
        if cell.cell_type == "markdown":
            out.append(text)
        else:
            out.append(textwrap.indent(text, "    │ ", lambda line: True))
    return "\n\n".join(out) + "\n"
