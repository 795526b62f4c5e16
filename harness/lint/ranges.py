"""A case's version ranges, read from its file without importing it (no torch import: a linter
must start fast and run where torch is absent).

``affects="..."`` or ``affects=(Affects(versions="...", ...), Affects(">=2.0", ...))``: the
literal strings are the ranges; a rule of the case fires where any of them holds.
"""
from __future__ import annotations

import ast
import functools
from pathlib import Path

from torch_pitfalls.versions import parse_range


@functools.lru_cache(maxsize=None)
def case_ranges(path: Path) -> tuple[str, ...]:
    """The ``versions`` of every ``Affects`` of the case at ``path`` (``"*"`` for none)."""
    tree = ast.parse(Path(path).read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Case":
            affects = next((k.value for k in node.keywords if k.arg == "affects"), None)
            return tuple(_ranges(affects))
    raise ValueError(f"{path}: no Case(...) call")


def _ranges(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, (ast.Tuple, ast.List)):
        out = []
        for entry in node.elts:
            if isinstance(entry, ast.Call):
                given = [k.value for k in entry.keywords if k.arg == "versions"] + entry.args[:1]
                out.append(given[0].value if given and isinstance(given[0], ast.Constant) else "*")
        return out
    return ["*"]


def affected(ranges: tuple[str, ...], torch_version: str | None) -> bool:
    """Whether any range admits the version (every one does when no version is given)."""
    if torch_version is None:
        return True
    return any(r == "*" or parse_range(r).contains(torch_version) for r in ranges)
