"""The home page (what the corpus is, how to run it, the filterable table of cases) and the
page of each topic."""
from __future__ import annotations

from pathlib import Path

from harness.loader import LoadedCase
from harness.matrix import Matrix

from docs.site.matrix_page import newest_symptom
from docs.site.text import case_href, code, esc, md, raw_html

INTRO = Path(__file__).with_name("home.md")  # the hand-written part of the home page


def topics_of(cases: list[LoadedCase]) -> list[str]:
    return sorted({lc.topic for lc in cases})


def home_page(cases: list[LoadedCase], m: Matrix) -> str:
    topics = topics_of(cases)
    intro = INTRO.read_text(encoding="utf-8").replace("{cases}", str(len(cases))).replace("{topics}", str(len(topics)))
    out = [intro.rstrip() + "\n", "## The cases\n", raw_html(_filters(cases) + _table(cases, m))]
    out.append("```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: Topics\n\n" + "\n".join(f"topics/{t}" for t in topics) + "\n```\n")
    out.append("```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: The corpus\n\nmatrix\nupgrade\nperformance\nwriting-a-case\n```\n")
    return "\n".join(out)


def _select(name: str, values: list[str]) -> str:
    options = "".join(f'<option value="{esc(v)}">{esc(v)}</option>' for v in values)
    return (f'<label>{name} <select id="filter-{name}" data-filter="{name}">'
            f'<option value="">all</option>{options}</select></label>')


def _filters(cases: list[LoadedCase]) -> str:
    kinds = sorted({lc.case.kind for lc in cases})
    tags = sorted({t for lc in cases for t in lc.case.tags})
    return (f'<div class="case-filters">{_select("topic", topics_of(cases))}{_select("kind", kinds)}'
            f'{_select("tag", tags)} <span id="cases-shown">{len(cases)} of {len(cases)} cases</span></div>')


def _table(cases: list[LoadedCase], m: Matrix) -> str:
    rows = []
    for lc in sorted(cases, key=lambda lc: (lc.topic, lc.id)):
        c = lc.case
        rows.append(
            f'<tr data-id="{esc(c.id)}" data-topic="{esc(lc.topic)}" data-kind="{esc(c.kind)}" '
            f'data-tags="{esc(" ".join(c.tags))}">'
            f"<td><code>{esc(c.id)}</code></td>"
            f'<td><a href="{case_href(c.id)}">{esc(c.title)}</a>'
            f'<div class="case-tags">{" ".join(f"<span>{esc(t)}</span>" for t in c.tags)}</div></td>'
            f'<td><a href="topics/{esc(lc.topic)}.html">{esc(lc.topic)}</a></td>'
            f"<td>{esc(c.kind)}</td><td>{esc(', '.join(c.devices))}</td>"
            f"<td>{esc(newest_symptom(m, c.id))}</td></tr>"
        )
    return ('<table id="cases-table" class="pitfalls-cases"><thead><tr><th>id</th><th>title and tags</th><th>topic</th>'
            "<th>kind</th><th>devices</th><th>symptom on the newest torch observed</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def topic_page(topic: str, cases: list[LoadedCase], m: Matrix) -> str:
    mine = sorted((lc for lc in cases if lc.topic == topic), key=lambda lc: lc.id)
    out = [f"# {topic}\n", f"{len(mine)} case{'s' if len(mine) != 1 else ''} about {md(topic)}.\n",
           "| case | kind | devices | symptom expected on torch | newest observed |", "|---|---|---|---|---|"]
    for lc in mine:
        c = lc.case
        out.append(f"| [{md(c.title)}](../cases/{c.id}.ipynb) | {c.kind} | {', '.join(c.devices)} | "
                   f"{code(c.affects_text)} | {md(newest_symptom(m, c.id))} |")
    out.append("\n```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n\n" + "\n".join(f"../cases/{lc.id}" for lc in mine) + "\n```\n")
    return "\n".join(out)
