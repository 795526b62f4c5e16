"""The version matrix on the site: the matrix page, a case's row, the newest observation.

Everything comes from ``torch_pitfalls.matrix`` (the recorded reports); nothing here runs a case.
"""

from __future__ import annotations

from packaging.version import Version

from docs.site.outputs import clean
from docs.site.record_text import change_texts, seen_lines
from docs.site.text import case_href, code, esc, raw_html, status_class
from torch_pitfalls.case import DEVICES
from torch_pitfalls.loader import LoadedCase
from torch_pitfalls.matrix import DEVICE_INDEPENDENT, NOT_OBSERVED, Matrix, device_kind
from torch_pitfalls.matrix.cli import MARKS, column_labels, provenance_lines

STATUS_MEANING = {
    "reproduced": "symptom expected here and seen; the fix holds",
    "absent": "symptom not expected here and not seen; the fix's check still tells it from the broken code, "
    "or, before an upgrade's change, the broken code was the right spelling on this release",
    "unverified": "nothing here tells the fix from the broken code (the symptom needs another device or torch, or a module is missing)",
    "mismatch": "symptom seen ≠ expected",
    "fix-failed": "the fixed variant raised, warned, showed the symptom, or its check failed (or accepted the broken result)",
    "error": "no verdict: a crash, a timeout, a leaked global",
    "skipped": "the device was not available",
    "stale": "recorded from an older text of the case",
    NOT_OBSERVED: "no report holds this case on this torch and device",
    DEVICE_INDEPENDENT: "the case's variants never use the device: its cpu run stands for every device",
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
    `pitfalls matrix` prints, with the words and the record's text on tap (matrix-cells.js) or hover."""
    tip = ""
    if cell.record is not None:
        tip = clean(cell.record.detail or cell.record.broken)
    text = (MARKS[cell.status].strip() or "·") if compact else cell.status
    if compact:
        tip = f"{cell.status}: {tip}" if tip else cell.status
    return f'<td class="{status_class(cell.status)}" title="{esc(tip)}" data-detail="{esc(tip)}" tabindex="0">{esc(text)}</td>'


def case_matrix_section(m: Matrix, case_id: str) -> str:
    """The case page's section: its row per device, and what changed between releases."""
    out = ["## Version matrix\n"]
    if not m.versions:
        out.append(f"{NOT_OBSERVED}: no report is recorded yet.\n")
        return "\n".join(out)
    head = "".join(f'<th title="{esc(v)}">{esc(label)}</th>' for v, label in zip(m.versions, column_labels(m)))
    rows = "".join(
        f"<tr><th>{esc(d)}</th>{''.join(_changed_td(c, m.changes(case_id, d), m) for c in m.row(case_id, d))}</tr>"
        for d in m.devices
    )
    out.append(
        raw_html(
            f'<div class="matrix-block"><table class="pitfalls-matrix case-row"><thead><tr><th>device</th>{head}</tr></thead>'
            f"<tbody>{rows}</tbody></table>"
            '<div class="matrix-detail" aria-live="polite"></div></div>'
        )
    )
    out.append(
        "Marks as in `pitfalls matrix`; tap or hover a cell for its words and the record's text "
        "(legend on the [matrix](../matrix.md) page).\n"
    )
    for d in m.devices:
        out.extend(_provenance(m, d))
    out.append("\n### What changed between releases\n")
    for d in m.devices:
        changes = m.changes(case_id, d)
        if not changes:
            out.append(f"- {d}: no change between the observed releases")
        for ch in changes:
            before, after = change_texts(m, ch)
            out.append(
                f"- {d}, {ch.variant}, **{ch.kind.replace('-', ' ')}** in {ch.since} (after {ch.previous}): "
                f"{code(before)} → {code(after)}"
            )
    out.extend(f"- {d}: {NOT_OBSERVED} (no {d} report is recorded)" for d in _unrecorded(m))
    out.append("\n### What you will see on your torch\n")
    for d in m.devices:
        for variant in ("broken", "fixed"):
            seen = seen_lines(m, case_id, d, variant)
            if seen:
                out.append(f"The {variant} code on {d}:\n")
                out.extend(f"- torch {span}: {code(text)}" for span, text in seen)
                out.append("")
    out.append(
        "\nEvery release and device of the [matrix](../matrix.md); [what changes when you upgrade](../upgrade.md).\n"
    )
    return "\n".join(out)


def _changed_td(cell, changes, m: Matrix) -> str:
    """A cell where a change is first seen: marked, with every change's before and after on tap or hover."""
    here = [ch for ch in changes if ch.since == cell.version]
    if not here:
        return _cell_td(cell, compact=True)
    tip = "\n".join(f"{ch.variant}, {ch.kind} in {ch.since}: {' → '.join(change_texts(m, ch))}" for ch in here)
    mark = MARKS[cell.status].strip() or "·"
    return (
        f'<td class="{status_class(cell.status)} changed" title="{esc(tip)}" data-detail="{esc(tip)}" tabindex="0">'
        f"{esc(mark)}<sup>{len(here)}</sup></td>"
    )


def matrix_page(m: Matrix, cases: list[LoadedCase]) -> str:
    out = [
        "# Version matrix\n",
        "What each case did on each torch release with a recorded report (`reports/`), per device. "
        "A cell is one record of a report, judged against the case as it is now. "
        "Cases whose behaviour changed between releases come first: a marked cell (a small number: how many "
        "changes) is the release where a change is first seen; tap or hover it for the text before and after, "
        "or read the list under the table. Cases that behave the same on every release are folded into "
        "one line per topic below.\n",
        legend(),
    ]
    if not m.versions:
        out.append("No report is recorded yet: every cell is *not observed*.\n")
    else:
        by_release = sorted(m.reports.items(), key=lambda item: (Version(item[0][0]), item[0][1]))
        out.append(
            "Reports: " + ", ".join(code(str(p.name)) for _, p in by_release) + ". "
            "For one upgrade at a time, see [Upgrading torch](upgrade.md).\n"
        )
    labels = column_labels(m)
    for device in m.devices:
        changing = [lc for lc in cases if m.changes(lc.id, device)]
        steady = [lc for lc in cases if lc not in changing]
        head = "".join(f'<th title="{esc(v)}">{esc(label)}</th>' for v, label in zip(m.versions, labels))
        observed = sorted({v for v, d in m.reports if d == device}, key=Version)
        one = len(observed) == 1  # a contributed run of one release: nothing to compare it with yet
        out.append(
            f"## {device}: one release observed ({observed[0]})\n"
            if one
            else f"## {device}: {len(changing)} of {len(cases)} cases changed between releases\n"
        )
        out.extend(_provenance(m, device))
        rows = []
        for lc in sorted(changing, key=lambda lc: (lc.topic, lc.id)):
            changes = m.changes(lc.id, device)
            cells = "".join(_changed_td(c, changes, m) for c in m.row(lc.id, device))
            rows.append(f'<tr><th><a href="{case_href(lc.id)}">{esc(lc.id)}</a></th>{cells}</tr>')
        if rows:
            out.append(
                raw_html(
                    f'<div class="matrix-block"><table class="pitfalls-matrix" id="matrix-{esc(device)}"><thead><tr><th>case</th>'
                    f"{head}</tr></thead><tbody>{''.join(rows)}</tbody></table>"
                    '<div class="matrix-detail" aria-live="polite"></div></div>'
                )
            )
            out.append(f"### Every change on {device}\n")
            for lc in sorted(changing, key=lambda lc: (lc.topic, lc.id)):
                out.append(f"- [{esc(lc.id)}](cases/{lc.id}.ipynb):")
                for ch in m.changes(lc.id, device):
                    before, after = change_texts(m, ch)
                    out.append(
                        f"  - {ch.since}, {ch.variant}, **{ch.kind.replace('-', ' ')}**: {code(before)} → {code(after)}"
                    )
            out.append("")
        out.append(
            f"### Observed on {observed[0]} ({len(steady)} cases, by topic)\n"
            if one
            else f"### Unchanged on every release ({len(steady)} cases, by topic)\n"
        )
        for topic in sorted({lc.topic for lc in steady}):
            mine = sorted((lc for lc in steady if lc.topic == topic), key=lambda lc: lc.id)
            parts = []
            for lc in mine:
                marks = "".join(MARKS[c.status].strip() or "·" for c in m.row(lc.id, device))
                parts.append(f"[{esc(lc.id)}](cases/{lc.id}.ipynb) {code(_runs(marks))}")
            # the topic page's own title (a zh page shows it translated)
            out.append(f"- **[](topics/{topic}.md)** ({len(mine)}): " + "; ".join(parts))
        out.append("")
    out.extend(f"## {d}\n\n{NOT_OBSERVED}: no {d} report is recorded.\n" for d in _unrecorded(m))
    out.append(CONTRIBUTE)
    return "\n".join(out) + "\n"


def legend() -> str:
    """What each mark means, in the cells' own colours: at the top of the matrix page."""
    items = "".join(
        f'<li><span class="legend-mark {status_class(s)}">{esc(MARKS[s].strip() or "·")}</span> '
        f"<code>{esc(s)}</code>: {esc(meaning)}</li>"
        for s, meaning in STATUS_MEANING.items()
    )
    return raw_html(
        f'<details class="matrix-legend" open><summary>What a cell says</summary><ul>{items}</ul></details>'
    )


CONTRIBUTE = (
    "## Contribute a run\n\n"
    "A CUDA cell becomes an observation when someone runs the corpus on a GPU; every GPU and release not "
    "listed above is open. Install the package beside your torch (`pip install` the wheel; it never installs torch), run "
    "`pitfalls run --json my-report.json` (every case, on cpu and cuda), and send the report. "
    "`pitfalls import-report my-report.json` checks it (schema, known cases, a release of the matrix; records "
    "of another text of a case are kept and marked stale) and files it as "
    "`reports/torch-<release>-<kind>-<model>.json`; its cells then show here as a device of their own "
    "(`cuda:<model>`), with the GPU, driver, CUDA and cuDNN versions and how torch was installed.\n"
)


def _runs(marks: str) -> str:
    """``RRRRRRRRRRRRRRRRR`` as ``R×17``: a row that never changes, in a few characters."""
    out, i = [], 0
    while i < len(marks):
        j = i
        while j < len(marks) and marks[j] == marks[i]:
            j += 1
        out.append(marks[i] + (f"×{j - i}" if j - i > 1 else ""))
        i = j
    return " ".join(out)


def _unrecorded(m: Matrix) -> list[str]:
    """Device kinds no report covers, neither this project's nor a contributed one."""
    return [d for d in DEVICES if d not in {device_kind(x) for x in m.devices}]


def _provenance(m: Matrix, device: str) -> list[str]:
    lines = provenance_lines(m, device)
    if not lines:
        return []
    return ["Contributed runs (`pitfalls import-report`), where each ran:\n", *(f"- {esc(line)}" for line in lines), ""]
