"""``pitfalls matrix``: the version matrix in a terminal, as JSON or Markdown, or checked."""
from __future__ import annotations

import json
import sys

from packaging.version import Version

from harness.matrix import NOT_OBSERVED, STALE, Matrix, device_kind, load_matrix
from harness.report import ReportError

EXIT_FAILED = 1
# One character per cell keeps 17 releases on a terminal line.
MARKS = {"reproduced": "R", "absent": ".", "unverified": "?", "mismatch": "M", "fix-failed": "F", "error": "E",
         "skipped": "s", STALE: "~", NOT_OBSERVED: " "}
LEGEND = ("R reproduced (symptom seen, expected)  . absent (not seen, not expected)  "
          "? unverified (nothing here tells the fix from the broken code)  M mismatch  "
          "F fix-failed  E error  s skipped  ~ stale (recorded from an older text of the case)  "
          "blank: not observed")


def load_for_device(args, usage_error) -> Matrix | None:
    """The recorded matrix of ``args.reports``, which must hold ``args.device`` (a usage error
    otherwise); None, with one line on stderr, when a report is malformed."""
    try:
        matrix = load_matrix(args.reports, args.cases)
    except ReportError as exc:
        print(f"pitfalls: error: {exc}", file=sys.stderr)
        return None
    if args.device not in matrix.devices:
        raise usage_error(f"no reports for device {args.device!r} in {args.reports}"
                          f" (recorded: {', '.join(matrix.devices) or 'none'})")
    return matrix


def run_matrix_command(args, usage_error) -> int:
    matrix = load_for_device(args, usage_error)
    if matrix is None:
        return EXIT_FAILED
    if args.json:
        print(json.dumps(matrix.to_json(), indent=1))
    elif args.markdown:
        print(markdown_table(matrix, args.device))
    elif args.check:
        return check(matrix)
    else:
        print(terminal_table(matrix, args.device))
        print()
        print(changes_list(matrix, args.device))
    return 0


def column_labels(matrix: Matrix) -> list[str]:
    """Column labels: the minor release ("2.4") where that names one report, else the full one."""
    minors = [v.rsplit(".", 1)[0] for v in matrix.versions]
    return [m if minors.count(m) == 1 else v for m, v in zip(minors, matrix.versions)]


def provenance_lines(matrix: Matrix, device: str) -> list[str]:
    """Where each report of a contributed device ran (``cuda:<model>``); this project's own
    ``cpu`` runs are described in their reports."""
    if ":" not in device:
        return []
    from harness.provenance import describe

    kind = device_kind(device)
    return [f"torch {v}: {describe(matrix.provenance.get((v, d)), kind)}"
            for v, d in sorted(matrix.reports, key=lambda k: Version(k[0])) if d == device]


def terminal_table(matrix: Matrix, device: str) -> str:
    labels = column_labels(matrix)
    width = max(len("case"), *(len(c.id) for c in matrix.cases))
    head = "case".ljust(width) + " " + " ".join(l.center(max(len(l), 1)) for l in labels) + "  changes"
    lines = [f"torch releases on {device}; one column per report in {', '.join(sorted({str(p.parent) for p in matrix.reports.values()}))}",
             *(f"  {line}" for line in provenance_lines(matrix, device)), head, "-" * len(head)]
    for c in matrix.cases:
        marks = " ".join(MARKS[cell.status].center(len(l)) for cell, l in zip(matrix.row(c.id, device), labels))
        lines.append(f"{c.id.ljust(width)} {marks}  {_brief(matrix.changes(c.id, device))}".rstrip())
    lines.append(LEGEND)
    return "\n".join(lines)


def markdown_table(matrix: Matrix, device: str) -> str:
    labels = column_labels(matrix)
    lines = ["| case | " + " | ".join(labels) + " | changes |", "|---|" + "---|" * (len(labels) + 1)]
    for c in matrix.cases:
        cells = [MARKS[cell.status].strip() or "·" for cell in matrix.row(c.id, device)]
        lines.append(f"| `{c.id}` | " + " | ".join(cells) + f" | {_brief(matrix.changes(c.id, device))} |")
    where = "".join(f"\n- {line}" for line in provenance_lines(matrix, device))
    return "\n".join([*lines, "", f"Device: {device}. " + LEGEND.replace("blank", "·") + where])


def _brief(changes) -> str:
    """One line per row: the kind and release of each change (the texts are in changes_list)."""
    return "; ".join(str(c) if c.kind in ("symptom-appears", "symptom-disappears")
                     else f"{c.kind} in {c.since}" + (f" ({c.variant})" if c.variant != "symptom" else "") for c in changes)


def changes_list(matrix: Matrix, device: str) -> str:
    """Every change with its before and after, case by case: what the table's column abbreviates."""
    lines = []
    for c in matrix.cases:
        found = matrix.changes(c.id, device)
        if found:
            lines.append(f"{c.id}:")
            lines.extend(f"  {ch}" for ch in found)
    return "\n".join(lines) if lines else "no changes observed"


def check(matrix: Matrix) -> int:
    """List stale and missing cells; fail on a failing outcome or a record of an unknown case.
    (A malformed report already failed in load_matrix.)"""
    problems = matrix.problems()
    for kind in ("stale", "missing", "failing", "unknown"):
        for line in problems[kind]:
            print(f"{kind}: {line}")
    n_cells = len(matrix.cases) * len(matrix.reports)
    print(f"{len(matrix.reports)} reports, {len(matrix.cases)} cases: {n_cells} cells; "
          + ", ".join(f"{len(problems[k])} {k}" for k in ("failing", "unknown", "stale", "missing")))
    return EXIT_FAILED if problems["failing"] or problems["unknown"] else 0
