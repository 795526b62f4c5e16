"""What no page or notebook of the built site may show, checked on the built files themselves so
that none of it comes back unseen: a terminal colour code, a path of the machine that built it,
the profiler's log lines, a fingerprint dict of the reports ("{'type': 'Tensor', …}"), a case's
optional module shown missing. The build fails on the first page that has one, naming it.
"""

from __future__ import annotations

import html
import importlib.util
import json
import re
import sys
import sysconfig
from pathlib import Path

from docs.site.outputs import ROOT
from docs.site.stamp import STAMP_KEY

_ESCAPE = "\x1b"


def _path_pattern(roots: tuple[str, ...]) -> re.Pattern:
    paths = {str(ROOT), sys.prefix, sysconfig.get_paths()["purelib"], *roots}
    return re.compile("|".join(re.escape(p.rstrip("/") + "/") for p in sorted(paths, key=len, reverse=True) if p))


CHECKS = (
    ("an ANSI escape", re.compile(re.escape(_ESCAPE) + r"|\[0m\b|\[1m\b")),
    ("profiler noise", re.compile(r"USDT:|profiler_start|profiler_stop")),
    ("a fingerprint dict", re.compile(r"""\{\s*['"]type['"]\s*:\s*['"]""")),
)


def page_text(path: Path) -> str:
    """What a reader can see of a built file: an HTML page's text unescaped, or every string of a
    notebook (sources and outputs)."""
    raw = path.read_text(encoding="utf-8", errors="replace")
    if path.suffix == ".ipynb":
        return "\n".join(_strings(json.loads(raw)))
    # the markup unescaped (attributes hold text too), and the text alone: inline code is cut into
    # one <span> a word, which would hide "{'type': 'Tensor'" from a pattern
    return html.unescape(raw) + "\n" + html.unescape(re.sub(r"<[^>]+>", "", raw))


def _strings(node) -> list[str]:
    if isinstance(node, str):
        return [node]
    if isinstance(node, dict):
        return [s for v in node.values() for s in _strings(v)]
    if isinstance(node, list):
        return [s for v in node for s in _strings(v)]
    return []


def problems(
    site: Path,
    page_notebooks: list[Path] = (),
    requires: dict[str, tuple[str, ...]] | None = None,
    roots: tuple[str, ...] = (),
) -> list[str]:
    """One line per built page or notebook that shows what it must not: ``<page>: <what> (…)``.
    ``page_notebooks`` (the pages' sources) and the downloaded notebooks are also read for a case's
    optional module (``requires``, by case id) shown missing in an output."""
    checks = (*CHECKS, ("a path of the build machine", _path_pattern(roots)))
    found = []
    for path in sorted([*site.rglob("*.html"), *site.rglob("*.ipynb")]):
        text = page_text(path)
        for what, pattern in checks:
            hit = pattern.search(text)
            if hit:
                found.append(f"{path.relative_to(site)}: {what} ({_around(text, hit)})")
    for path in [*page_notebooks, *sorted(site.rglob("*.ipynb"))]:
        nb = json.loads(path.read_text(encoding="utf-8"))
        case = nb.get("metadata", {}).get(STAMP_KEY, {}).get("case")
        for module in (requires or {}).get(case, ()):
            if importlib.util.find_spec(module.split(".")[0]) is not None:
                continue  # importable here: a message about it is the case's own story (it blocks it on purpose)
            missing = re.compile(rf"No module named '{re.escape(module.split('.')[0])}")
            outputs = "\n".join(s for c in nb.get("cells", []) for s in _strings(c.get("outputs", [])))
            hit = missing.search(outputs)
            if hit:
                where = path.relative_to(site) if path.is_relative_to(site) else path.name
                found.append(f"{where}: a missing optional module as a case's output ({_around(outputs, hit)})")
    return found


def _around(text: str, hit: re.Match) -> str:
    return "…" + text[max(0, hit.start() - 40) : hit.end() + 40].replace("\n", " ").replace(_ESCAPE, "\\x1b") + "…"
