"""The version matrix on the site: the matrix page, a case's row, the newest observation.

Everything comes from ``harness.matrix`` (the recorded reports); nothing here runs a case.
"""
from __future__ import annotations

from packaging.version import Version

from harness.case import DEVICES
from harness.loader import LoadedCase
from harness.matrix import NOT_OBSERVED, Matrix
from harness.matrix_cli import MARKS

from docs.site.text import case_href, code, esc, raw_html, status_class

STATUS_MEANING = {
    "reproduced": "symptom expected here and seen; the fix holds",
    "absent": "symptom not expected here and not seen; the fix holds",
    "mismatch": "symptom seen ≠ expected",
    "fix-failed": "the fixed variant raised, failed its assertion or warned",
    "error": "no verdict: a crash, a timeout, a leaked global",
    "skipped": "the device or an optional module was missing",
    "stale": "recorded from an older text of the case",
    NOT_OBSERVED: "no report holds this case on this torch and device",
}


def newest_symptom(m: Matrix, case_id: str) -> str:
    """Whether the symptom was seen on the newest torch with a fresh record, per device."""
    found = []
    for device in m.devices:
        cells = [c for c in m.row(case_id, device) if c.observed is not None]
        if cells:
            c = cells[-1]
            found.append(f"{'seen' if c.observed else 'not seen'} on {c.version} ({device})")
    return "; ".join(found) or NOT_OBSERVED


def _cell_td(cell, compact: bool = False) -> str:
    """A cell: its status in words, or (17 releases side by side) the one-character mark that
    `pitfalls matrix` prints, with the words and the record's text on hover."""
    tip = ""
    if cell.record is not None:
        tip = cell.record.detail or cell.record.broken
    text = (MARKS[cell.status].strip() or "·") if compact else cell.status
    if compact:
        tip = f"{cell.status}: {tip}" if tip else cell.status
    return f'<td class="{status_class(cell.status)}" title="{esc(tip)}">{esc(text)}</td>'


def case_matrix_section(m: Matrix, case_id: str) -> str:
    """The case page's section: its row per device, and what changed between releases."""
    out = ["## Version matrix\n"]
    if not m.versions:
        out.append(f"{NOT_OBSERVED}: no report is recorded yet.\n")
        return "\n".join(out)
    head = "".join(f"<th>{esc(v)}</th>" for v in m.versions)
    rows = "".join(
        f"<tr><th>{esc(d)}</th>{''.join(_cell_td(c) for c in m.row(case_id, d))}</tr>" for d in m.devices
    )
    out.append(raw_html(
        f'<table class="pitfalls-matrix case-matrix"><thead><tr><th>device</th>{head}</tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    ))
    for d in m.devices:
        changes = m.changes(case_id, d)
        out.append(f"- {d}: " + ("; ".join(changes) if changes else "no change between the observed releases"))
    out.extend(f"- {d}: {NOT_OBSERVED} (no {d} report is recorded)" for d in _unrecorded(m))
    out.append("\nEvery release and device of the [matrix](../matrix.md).\n")
    return "\n".join(out)


def matrix_page(m: Matrix, cases: list[LoadedCase]) -> str:
    out = ["# Version matrix\n",
           "What each case did on each torch release with a recorded report (`reports/`), per device. "
           "A cell is one record of a report, judged against the case as it is now. "
           "Hover a cell for what the broken variant produced.\n"]
    if not m.versions:
        out.append("No report is recorded yet: every cell is *not observed*.\n")
    else:
        by_release = sorted(m.reports.items(), key=lambda item: (Version(item[0][0]), item[0][1]))
        out.append("Reports: " + ", ".join(code(str(p.name)) for _, p in by_release) + ".\n")
    for device in m.devices:
        head = "".join(f"<th>{esc(v)}</th>" for v in m.versions)
        rows = []
        for lc in cases:
            changes = "; ".join(m.changes(lc.id, device))
            cells = "".join(_cell_td(c, compact=True) for c in m.row(lc.id, device))
            rows.append(f'<tr><th><a href="{case_href(lc.id)}">{esc(lc.id)}</a></th>'
                        f"<td>{esc(lc.topic)}</td>{cells}<td>{esc(changes)}</td></tr>")
        out.append(f"## {device}\n")
        out.append(raw_html(
            f'<table class="pitfalls-matrix" id="matrix-{esc(device)}"><thead><tr><th>case</th><th>topic</th>'
            f"{head}<th>changes</th></tr></thead><tbody>{''.join(rows)}</tbody></table>"
        ))
    out.extend(f"## {d}\n\n{NOT_OBSERVED}: no {d} report is recorded.\n" for d in _unrecorded(m))
    out.append("## What a cell says\n")
    out.extend(f"- {code(MARKS[s].strip() or '·')} {code(s)}: {meaning}" for s, meaning in STATUS_MEANING.items())
    return "\n".join(out) + "\n"


def _unrecorded(m: Matrix) -> list[str]:
    return [d for d in DEVICES if d not in m.devices]
