"""A case module read as a story in a terminal: its prose, then its code, cell by cell (the
harness's own section folded to one line)."""

from __future__ import annotations

import textwrap
from pathlib import Path

from torch_pitfalls.casefile import read_case


def render_story(path: Path, width: int = 100) -> str:
    case = read_case(path)
    out = []
    for cell in case.story_cells:
        text = cell.source.strip()
        if not text:
            continue
        out.append(text if cell.kind == "markdown" else textwrap.indent(text, "    │ ", lambda line: True))
    if case.harness_cells:
        out.append(f"(then the harness's part: symptom, near miss, check and the facts; {path})")
    return "\n\n".join(out) + "\n"
