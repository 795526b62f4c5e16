"""The version matrix's commands: ``pitfalls matrix`` (the matrix in a terminal, as JSON or
Markdown, or checked), ``pitfalls upgrade`` (harness/matrix/upgrade.py) and ``pitfalls
import-report`` (harness/matrix/import_report.py)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from packaging.version import Version

from torch_pitfalls.matrix import (
    DEVICE_INDEPENDENT,
    NOT_OBSERVED,
    STALE,
    Matrix,
    default_reports_dir,
    device_kind,
    load_matrix,
)
from torch_pitfalls.matrix.changes import KINDS
from torch_pitfalls.matrix.upgrade import text as upgrade_text
from torch_pitfalls.matrix.upgrade import upgrade
from torch_pitfalls.run.report import ReportError

EXIT_FAILED = 1
# One character per cell keeps 17 releases on a terminal line.
MARKS = {
    "reproduced": "R",
    "absent": ".",
    "unverified": "?",
    "mismatch": "M",
    "fix-failed": "F",
    "error": "E",
    "skipped": "s",
    STALE: "~",
    NOT_OBSERVED: " ",
    DEVICE_INDEPENDENT: "=",
}
LEGEND = (
    "R reproduced (symptom seen, expected)  . absent (not seen, not expected)  "
    "? unverified (nothing here tells the fix from the broken code)  M mismatch  "
    "F fix-failed  E error  s skipped  ~ stale (recorded from an older text of the case)  "
    "= device-independent (the cpu run stands for it)  blank: not observed"
)


def add_commands(sub) -> None:
    matrix = sub.add_parser("matrix", help="the recorded reports as a case × torch version table")
    matrix.add_argument(
        "--reports",
        metavar="DIR",
        help="folder of reports (default: reports/ beside the cases folder: ./reports in a checkout, the recorded matrix installed with the harness elsewhere)",
    )
    matrix.add_argument("--device", default="cpu", help="whose cells to show (default: cpu)")
    form = matrix.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the merged matrix as JSON")
    form.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    form.add_argument(
        "--check",
        action="store_true",
        help="list stale and missing cells; exit 1 on a mismatch, a bad report or an unknown case id",
    )
    matrix.set_defaults(handler=run_matrix_command)
    up = sub.add_parser("upgrade", help="every observed change between two recorded torch releases")
    up.add_argument("start", metavar="FROM", help="the release you are on, e.g. 2.3.1")
    up.add_argument("end", metavar="TO", help="the release you move to, e.g. 2.6.0")
    up.add_argument(
        "--reports",
        metavar="DIR",
        help="folder of reports (default: reports/ beside the cases folder: ./reports in a checkout, the recorded matrix installed with the harness elsewhere)",
    )
    up.add_argument("--device", default="cpu", help="whose cells to compare (default: cpu)")
    up.add_argument("--json", action="store_true", help="print the result as JSON (harness/matrix/upgrade.schema.json)")
    up.add_argument("--fail-on", metavar="KIND[,KIND]", help="exit 1 when a change of one of these kinds is present")
    up.set_defaults(handler=run_upgrade_command)
    imp = sub.add_parser(
        "import-report", help="check a report made elsewhere (a GPU, another machine) and file it under reports/"
    )
    imp.add_argument("file", metavar="FILE", help="a report written by `pitfalls run --json`")
    imp.add_argument("--reports", default="reports", metavar="DIR", help="folder of reports (default: ./reports)")
    imp.add_argument(
        "--replace", action="store_true", help="file it over an earlier report of the same torch and device"
    )
    imp.set_defaults(handler=_import_report)


def _import_report(args, usage_error) -> int:
    from torch_pitfalls.matrix.import_report import run_import

    return run_import(args)


def load_for_device(args, usage_error) -> Matrix | None:
    """The recorded matrix of ``args.reports``, which must exist and hold ``args.device`` (a
    usage error otherwise); None, with one line on stderr, when a report is malformed."""
    if args.reports is None:
        args.reports = str(default_reports_dir(args.cases))
    if not Path(args.reports).is_dir():
        raise usage_error(f"--reports {args.reports}: no such reports folder")
    try:
        matrix = load_matrix(args.reports, args.cases)
    except ReportError as exc:
        print(f"pitfalls: error: {exc}", file=sys.stderr)
        return None
    if args.device not in matrix.devices:
        raise usage_error(
            f"no reports for device {args.device!r} in {args.reports} (recorded: {', '.join(matrix.devices) or 'none'})"
        )
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
    from torch_pitfalls.run.provenance import describe

    kind = device_kind(device)
    return [
        f"torch {v}: {describe(matrix.provenance.get((v, d)), kind)}"
        for v, d in sorted(matrix.reports, key=lambda k: Version(k[0]))
        if d == device
    ]


def terminal_table(matrix: Matrix, device: str) -> str:
    labels = column_labels(matrix)
    width = max(len("case"), *(len(c.id) for c in matrix.cases))
    head = "case".ljust(width) + " " + " ".join(label.center(max(len(label), 1)) for label in labels) + "  changes"
    lines = [
        f"torch releases on {device}; one column per report in {', '.join(sorted({str(p.parent) for p in matrix.reports.values()}))}",
        *(f"  {line}" for line in provenance_lines(matrix, device)),
        head,
        "-" * len(head),
    ]
    for c in matrix.cases:
        marks = " ".join(MARKS[cell.status].center(len(label)) for cell, label in zip(matrix.row(c.id, device), labels))
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
    return "; ".join(
        str(c)
        if c.kind in ("symptom-appears", "symptom-disappears")
        else f"{c.kind} in {c.since}" + (f" ({c.variant})" if c.variant != "symptom" else "")
        for c in changes
    )


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
    print(
        f"{len(matrix.reports)} reports, {len(matrix.cases)} cases: {n_cells} cells; "
        + ", ".join(f"{len(problems[k])} {k}" for k in ("failing", "unknown", "stale", "missing"))
    )
    return EXIT_FAILED if problems["failing"] or problems["unknown"] else 0


def parse_kinds(value: str | None, usage_error) -> list[str]:
    if not value:
        return []
    kinds = [k.strip() for k in value.split(",") if k.strip()]
    unknown = [k for k in kinds if k not in KINDS]
    if unknown or not kinds:
        raise usage_error(f"--fail-on: unknown kind {', '.join(unknown) or repr(value)} (known: {', '.join(KINDS)})")
    return kinds


def run_upgrade_command(args, usage_error) -> int:
    fail_on = parse_kinds(args.fail_on, usage_error)
    matrix = load_for_device(args, usage_error)
    if matrix is None:
        return EXIT_FAILED
    for name, version in (("FROM", args.start), ("TO", args.end)):
        if version not in matrix.versions:
            raise usage_error(f"{name} {version!r} is not a recorded release (recorded: {', '.join(matrix.versions)})")
    if Version(args.start) >= Version(args.end):
        raise usage_error(f"FROM {args.start} must be an older release than TO {args.end}")
    result = upgrade(matrix, args.start, args.end, args.device)
    print(json.dumps(result, indent=1) if args.json else upgrade_text(result))
    hit = [k for k in fail_on if result["by_kind"].get(k)]
    if hit:
        print(f"pitfalls: upgrade {args.start} -> {args.end} has changes of kind {', '.join(hit)}", file=sys.stderr)
        return EXIT_FAILED
    return 0
