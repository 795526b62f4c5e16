"""The home page, for a learner: the ways in (start page, symptoms, upgrade picker, search) and the
filterable table of cases; and the "About the corpus" page, for maintainers: how it is proven and run."""

from __future__ import annotations

from pathlib import Path

from docs.site.matrix_page import newest_symptom
from docs.site.symptom_page import CATEGORIES, Symptom
from docs.site.text import case_href, esc, raw_html
from torch_pitfalls.loader import LoadedCase
from torch_pitfalls.matrix import Matrix, device_kind
from torch_pitfalls.matrix.claims import reason_of

INTRO = Path(__file__).with_name("home.md")  # the hand-written part of the home page
ABOUT = Path(__file__).with_name("about.md")  # the hand-written part of the about page


def topics_of(cases: list[LoadedCase]) -> list[str]:
    return sorted({lc.topic for lc in cases})


def home_page(cases: list[LoadedCase], m: Matrix, symptoms: dict[str, Symptom] | None = None) -> str:
    symptoms = symptoms or {}
    topics = topics_of(cases)
    intro = INTRO.read_text(encoding="utf-8").replace("{cases}", str(len(cases)))
    out = [
        intro.rstrip() + "\n",
        "(cases)=\n## The cases\n",
        "Choose a topic, a kind, a tag or a symptom to narrow the table; the address of the page keeps the choice, "
        "so a filtered table can be linked to.\n",
        raw_html(_filters(cases, symptoms) + '<div class="table-scroll">' + _table(cases, m, symptoms) + "</div>"),
    ]
    out.append("```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: Learn\n\nstart\nsymptoms\nupgrade\n```\n")
    out.append(
        "```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: Topics\n\n"
        + "\n".join(f"topics/{t}" for t in topics)
        + "\n```\n"
    )
    out.append(
        "```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: The corpus\n\nabout\ncoverage\nmatrix\nlinters\nwatching\nperformance\nwriting-a-case\n```\n"
    )
    return "\n".join(out)


def about_page(cases: list[LoadedCase], m: Matrix) -> str:
    text = ABOUT.read_text(encoding="utf-8")
    return (
        text.replace("{cases}", str(len(cases)))
        .replace("{topics}", str(len(topics_of(cases))))
        .replace("{evidence}", _evidence_summary(cases, m).strip())
    )


def newest_cell(m: Matrix, case_id: str, device: str = "cpu"):
    """The case's cell on the newest release recorded for ``device``, or None."""
    return m.cell(case_id, m.versions[-1], device) if m.versions and device in m.devices else None


def evidence(m: Matrix, lc: LoadedCase) -> str:
    """In words: what the newest recorded release observed of the case on CPU."""
    cell = newest_cell(m, lc.id)
    if cell is None:
        return "not observed"
    if cell.status == "reproduced":
        return "observed (symptom seen)"
    if cell.status == "absent":
        return "observed (absent, as declared)"
    if cell.status == "unverified":
        return "unverified: " + reason_of(cell.record.detail)
    return cell.status


def _evidence_summary(cases: list[LoadedCase], m: Matrix) -> str:
    if not m.versions:
        return "No report is recorded yet: nothing on this site is observed.\n"
    words = [evidence(m, lc) for lc in cases]
    seen = sum(w.startswith("observed") for w in words)
    unverified = sum(w.startswith("unverified") for w in words)
    inferred = sum(any(r.since for r in lc.case.rules) for lc in cases)
    gpus = [d for d in m.devices if device_kind(d) == "cuda"]  # contributed columns: cuda:<model>
    cuda = (
        f"CUDA is observed on {', '.join(gpus)} (its cells are in the version matrix)"
        if gpus
        else "no CUDA report is recorded, so no CUDA claim is observed"
    )
    return (
        f"On the newest recorded release (torch {m.versions[-1]}, CPU): **{seen}** cases observed as declared "
        f"with their fix proven, **{unverified}** unverified (nothing here tells the fix from the broken code; "
        f"the reason is in the last column), {len(cases) - seen - unverified} other. {inferred} cases have a lower "
        f"bound older than the matrix, inferred from a source and marked so on their page; {cuda}.\n"
    )


# What a reader reads for a kind and a topic (the data keys stay the ids): words, which the zh
# edition translates, where the bare key would be left as data.
KIND_LABELS = {
    "error": "raises an error",
    "silent": "silently wrong",
    "warning": "warns",
    "performance": "slow or memory-hungry",
    "historical": "only in old releases",
}
FILTER_LABELS = {"topic": "Topic", "kind": "Kind", "tag": "Tag", "symptom": "Symptom"}


def topic_label(topic: str) -> str:
    return topic.capitalize()


def _select(name: str, values: list[str], labels: dict[str, str] | None = None) -> str:
    labels = labels or {}
    options = "".join(f'<option value="{esc(v)}">{esc(labels.get(v, v))}</option>' for v in values)
    return (
        f'<label>{FILTER_LABELS[name]} <select id="filter-{name}" data-filter="{name}">'
        f'<option value="">all</option>{options}</select></label>'
    )


def _filters(cases: list[LoadedCase], symptoms: dict[str, Symptom]) -> str:
    kinds = sorted({lc.case.kind for lc in cases})
    tags = sorted({t for lc in cases for t in lc.case.tags})
    used = [k for k in CATEGORIES if any(s.category == k for s in symptoms.values())]
    return (
        f'<div class="case-filters">{_select("topic", topics_of(cases), {t: topic_label(t) for t in topics_of(cases)})}'
        f"{_select('kind', kinds, KIND_LABELS)}"
        f"{_select('tag', tags)}{_select('symptom', used, {k: CATEGORIES[k][0] for k in used})} "
        f'<span id="cases-shown">{len(cases)} of {len(cases)} cases</span></div>'
    )


def _table(cases: list[LoadedCase], m: Matrix, symptoms: dict[str, Symptom]) -> str:
    rows = []
    for lc in sorted(cases, key=lambda lc: (lc.topic, lc.id)):
        c = lc.case
        seen = symptoms.get(c.id)
        rows.append(
            f'<tr data-id="{esc(c.id)}" data-topic="{esc(lc.topic)}" data-kind="{esc(c.kind)}" '
            f'data-tags="{esc(" ".join(c.tags))}" data-symptom="{esc(seen.category if seen else "")}">'
            f'<td><a href="{case_href(c.id)}">{esc(c.title)}</a><div class="case-id"><code>{esc(c.id)}</code></div>'
            f'<div class="case-tags">{" ".join(f"<span>{esc(t)}</span>" for t in c.tags)}</div></td>'
            f"<td>{esc(seen.line) if seen else ''}</td>"
            f'<td><a href="topics/{esc(lc.topic)}.html">{esc(topic_label(lc.topic))}</a></td>'
            f"<td>{esc(KIND_LABELS.get(c.kind, c.kind))}</td><td>{esc(', '.join(c.devices))}</td>"
            f"<td>{esc(newest_symptom(m, c.id))}</td><td>{esc(evidence(m, lc))}</td></tr>"
        )
    return (
        # headings in words, not the filters' keys (topic, kind), which the zh edition leaves as data
        '<table id="cases-table" class="pitfalls-cases"><thead><tr><th>Case</th><th>What you see</th><th>Topic</th>'
        "<th>Kind</th><th>Devices</th><th>Symptom on the newest torch observed</th><th>Evidence</th></tr></thead>"
        f"<tbody>{''.join(rows)}</tbody></table>"
    )
