"""The coverage page: an independent list of the pitfalls PyTorch users hit (docs/external_pitfalls.toml,
mined from sources this project did not write) held against the corpus, with the figures computed
from that list, never written by hand."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import tomllib

from docs.site.text import md
from torch_pitfalls.loader import LoadedCase

EXTERNAL_LIST = Path("docs") / "external_pitfalls.toml"  # under the project's root
COVERAGE_VALUE = {"full": 1.0, "partial": 0.5, "none": 0.0}  # a partial match counts as half
HEADINGS = {
    "full": "Covered by a case",
    "partial": "Covered in part (a case shows a close relative)",
    "none": "Not covered yet",
}


class CoverageError(ValueError):
    """The list does not parse or names a case the corpus lacks; the message names what is wrong."""


@dataclass(frozen=True)
class Coverage:
    pitfalls: list[dict]
    sources: dict[str, dict]

    @property
    def unweighted(self) -> float:
        return sum(COVERAGE_VALUE[p["coverage"]] for p in self.pitfalls) / len(self.pitfalls)

    @property
    def weighted(self) -> float:
        """Weighted by how many independent families of sources (all of PyTorch's docs pages one
        family, a tool's rule list another) name each pitfall."""
        total = sum(p["family_weight"] for p in self.pitfalls)
        return sum(COVERAGE_VALUE[p["coverage"]] * p["family_weight"] for p in self.pitfalls) / total

    def count(self, coverage: str) -> int:
        return sum(p["coverage"] == coverage for p in self.pitfalls)


def load_coverage(root: Path, case_ids: set[str]) -> Coverage | None:
    """The project's external list, checked against its cases (None where it has none)."""
    path = Path(root) / EXTERNAL_LIST
    if not path.is_file():
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        raise CoverageError(f"{path}: {exc}") from None
    pitfalls, sources = data.get("pitfall", []), data.get("sources", {})
    if not pitfalls:
        raise CoverageError(f"{path}: no [[pitfall]] entries")
    for p in pitfalls:
        if p.get("coverage") not in COVERAGE_VALUE:
            raise CoverageError(f"{path}: pitfall {p.get('id')!r}: coverage must be full, partial or none")
        unknown = [c for c in p.get("cases", []) if c not in case_ids]
        if unknown:
            raise CoverageError(f"{path}: pitfall {p['id']!r} names unknown case {', '.join(unknown)}")
        if p["coverage"] != "none" and not p.get("cases"):
            raise CoverageError(f"{path}: pitfall {p['id']!r} is {p['coverage']} but names no case")
        missing = [s for s in p.get("sources", []) if s not in sources]
        if missing:
            raise CoverageError(f"{path}: pitfall {p['id']!r} cites unknown source {', '.join(missing)}")
    return Coverage(pitfalls, sources)


def coverage_page(coverage: Coverage | None, cases: list[LoadedCase]) -> str:
    out = ["# What users hit, and what the corpus covers\n"]
    if coverage is None:
        out.append("This project has no independent list of pitfalls to hold the corpus against.\n")
        return "\n".join(out)
    titles = {lc.id: lc.case.title for lc in cases}
    n = len(coverage.pitfalls)
    out.append(
        f"An independent list of {n} pitfalls that PyTorch users meet, gathered from sources this project did not "
        f"write: silent-bug studies, the rule lists of run-time checking tools, practitioners' lists, PyTorch's own "
        f"notes, the most-asked questions and fault taxonomies. Each pitfall names the sources that describe it; "
        f"its weight is the number of independent families of sources that do. Held against the corpus: "
        f"**{coverage.count('full')}** covered by a case, **{coverage.count('partial')}** in part, "
        f"**{coverage.count('none')}** not yet. Counting a partial match as half, the corpus covers "
        f"**{coverage.unweighted:.0%}** of the list, and **{coverage.weighted:.0%}** weighted by the sources "
        f"(`docs/external_pitfalls.toml`).\n"
    )
    for key, heading in HEADINGS.items():
        mine = sorted(
            (p for p in coverage.pitfalls if p["coverage"] == key), key=lambda p: (-p["family_weight"], p["title"])
        )
        out.append(f"## {heading} ({len(mine)})\n")
        out.append("| pitfall | weight | a CPU shows it | cases |\n|---|---:|---|---|")
        for p in mine:
            linked = ", ".join(f"[{md(titles[c])}](cases/{c}.ipynb)" for c in p.get("cases", []))
            out.append(
                f"| {md(p['title'])} | {p['family_weight']} | {'yes' if p.get('cpu') else 'no'} | {linked or '—'} |"
            )
        out.append("")
    out.append("## The sources\n")
    for key, source in sorted(coverage.sources.items()):
        title = md(source.get("title", key))
        out.append(f"- `{key}`: [{title}]({source['url']})" if source.get("url") else f"- `{key}`: {title}")
    return "\n".join(out) + "\n"
