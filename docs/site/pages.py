"""The home page (what the corpus is, how to run it, the filterable table of cases) and the
page of each topic."""
from __future__ import annotations

from pathlib import Path

from harness.claims import observed_bounds, reason_of
from harness.loader import LoadedCase
from harness.matrix import NOT_OBSERVED, Matrix

from docs.site.matrix_page import newest_symptom
from docs.site.text import case_href, code, esc, md, raw_html

INTRO = Path(__file__).with_name("home.md")  # the hand-written part of the home page


def topics_of(cases: list[LoadedCase]) -> list[str]:
    return sorted({lc.topic for lc in cases})


def home_page(cases: list[LoadedCase], m: Matrix) -> str:
    topics = topics_of(cases)
    intro = INTRO.read_text(encoding="utf-8").replace("{cases}", str(len(cases))).replace("{topics}", str(len(topics)))
    out = [intro.rstrip() + "\n", "## The cases\n", _evidence_summary(cases, m), raw_html(_filters(cases) + _table(cases, m))]
    out.append("```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: Topics\n\n" + "\n".join(f"topics/{t}" for t in topics) + "\n```\n")
    out.append("```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n:caption: The corpus\n\nmatrix\nupgrade\nlinters\nperformance\nwriting-a-case\n```\n")
    return "\n".join(out)


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
    cuda = "no CUDA report is recorded, so no CUDA claim is observed" if "cuda" not in m.devices else "CUDA reports are recorded"
    return (f"On the newest recorded release (torch {m.versions[-1]}, CPU): **{seen}** cases observed as declared "
            f"with their fix proven, **{unverified}** unverified (nothing here tells the fix from the broken code; "
            f"the reason is in the last column), {len(cases) - seen - unverified} other. {inferred} cases have a lower "
            f"bound older than the matrix, inferred from a source and marked so on their page; {cuda}.\n")


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
            f"<td>{esc(newest_symptom(m, c.id))}</td><td>{esc(evidence(m, lc))}</td></tr>"
        )
    return ('<table id="cases-table" class="pitfalls-cases"><thead><tr><th>id</th><th>title and tags</th><th>topic</th>'
            "<th>kind</th><th>devices</th><th>symptom on the newest torch observed</th><th>evidence</th></tr></thead>"
            f"<tbody>{''.join(rows)}</tbody></table>")


def topic_page(topic: str, cases: list[LoadedCase], m: Matrix) -> str:
    mine = sorted((lc for lc in cases if lc.topic == topic), key=lambda lc: lc.id)
    out = [f"# {topic}\n", f"{len(mine)} case{'s' if len(mine) != 1 else ''} about {md(topic)}.\n",
           "| case | kind | devices | symptom expected on torch | newest observed |", "|---|---|---|---|---|"]
    for lc in mine:
        c = lc.case
        out.append(f"| [{md(c.title)}](../cases/{c.id}.ipynb) | {c.kind} | {', '.join(c.devices)} | "
                   f"{code(c.affects_text)} | {md(newest_symptom(m, c.id))} |")
    if topic == "upgrade":
        out.extend(upgrade_boundaries(mine, m))
    out.append("\n```{toctree}\n:hidden:\n:titlesonly:\n:maxdepth: 1\n\n" + "\n".join(f"../cases/{lc.id}" for lc in mine) + "\n```\n")
    return "\n".join(out)


UPGRADE_INTRO = (
    "Code that worked on an older torch and, on a newer one, raises, warns or computes something else. "
    "Each case's broken code is the spelling that was right before; its fixed code is the spelling that "
    "passes on every release of the matrix. The release where each change starts is observed on CPU by "
    "the version matrix, not copied from release notes: `tests/test_upgrade_boundaries.py` requires it to "
    "be the release the case's range names, with the release before it absent. The leads came from "
    "`make upgrade-scan`, which diffs the warnings, signatures and native messages of consecutive releases."
)


def upgrade_boundaries(mine: list[LoadedCase], m: Matrix) -> list[str]:
    """Each upgrade case's boundary as declared and as the matrix saw it (cpu)."""
    out = ["", UPGRADE_INTRO, "", "| case | declared range | first seen by the matrix | the release before | "
           "fix passes on every release |", "|---|---|---|---|---|"]

    def start(lc):  # by the release the change starts in, as declared
        return next((i for i, v in enumerate(m.versions) if lc.case.expected(v, "cpu")), len(m.versions)), lc.id

    def shown(cell):  # a form where the symptom changed category, else the outcome
        return (cell.form or cell.status) if cell.observed else cell.status

    for lc in sorted(mine, key=start):
        bounds = [(now, before) for _, now, before in observed_bounds(lc.case, m, "cpu") if now is not None]
        seen = "; ".join(f"{now.version} ({shown(now)})" for now, _ in bounds) or NOT_OBSERVED
        prior = "; ".join(f"{before.version}: {shown(before)}" for _, before in bounds) or NOT_OBSERVED
        fix = {True: "yes", False: "no", None: NOT_OBSERVED}[m.portable_fix(lc.id, "cpu", m.versions)]
        out.append(f"| [{esc(lc.id)}](../cases/{lc.id}.ipynb) | {code(lc.case.affects_text)} | {seen} | {prior} | {fix} |")
    return out
