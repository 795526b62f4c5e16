"""``pitfalls``: list, show and run the corpus from a terminal.

    pitfalls list                      id, topic, kind, devices, affects, expected on this torch
    pitfalls show ID                   the case's story: prose and code
    pitfalls run [ID ...] [--device cpu|cuda] [--json PATH]
    pitfalls matrix [--reports DIR] [--json | --markdown | --check]
    pitfalls upgrade FROM TO [--json] [--fail-on KIND[,KIND]]
    pitfalls import-report FILE [--reports DIR] [--replace]
    pitfalls lint-bench [--json] [--write PATH]
    pitfalls lint PATH... [--format text|json|sarif] [--select ID] [--ignore ID] [--torch X.Y | --all-versions]

Bad input (an unknown id or device, a bad option, a malformed case) is one line on stderr and
exit status 2; ``run`` exits 1 when any outcome is mismatch, fix-failed or error.
"""
from __future__ import annotations

import argparse
import importlib.util
import datetime as dt
import sys
import time
from collections import Counter
from pathlib import Path

from harness.case import DEVICES

EXIT_FAILED, EXIT_USAGE = 1, 2
NEEDS_TORCH = ("list", "show", "run")


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + message; we want one line
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pitfalls", description="An executable, verified corpus of PyTorch pitfalls.")
    p.add_argument("--cases", default=None, metavar="DIR",
                   help="the cases folder (default: ./cases, else the corpus installed with the harness)")
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list the cases and whether each symptom is expected on this torch")
    show = sub.add_parser("show", help="print a case's story (prose and code)")
    show.add_argument("id")
    run = sub.add_parser("run", help="run cases on devices and summarise")
    run.add_argument("ids", nargs="*", metavar="ID", help="case ids (default: all)")
    run.add_argument("--device", action="append", metavar="DEVICE", help=f"{' or '.join(DEVICES)} (repeatable; default: both)")
    run.add_argument("--json", metavar="PATH", help="write the JSON report to PATH (folders are created)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    matrix = sub.add_parser("matrix", help="the recorded reports as a case × torch version table")
    matrix.add_argument("--reports", default="reports", metavar="DIR", help="folder of reports (default: ./reports)")
    matrix.add_argument("--device", default="cpu", help="whose cells to show (default: cpu)")
    form = matrix.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the merged matrix as JSON")
    form.add_argument("--markdown", action="store_true", help="print the table as Markdown")
    form.add_argument("--check", action="store_true",
                      help="list stale and missing cells; exit 1 on a mismatch, a bad report or an unknown case id")
    up = sub.add_parser("upgrade", help="every observed change between two recorded torch releases")
    up.add_argument("start", metavar="FROM", help="the release you are on, e.g. 2.3.1")
    up.add_argument("end", metavar="TO", help="the release you move to, e.g. 2.6.0")
    up.add_argument("--reports", default="reports", metavar="DIR", help="folder of reports (default: ./reports)")
    up.add_argument("--device", default="cpu", help="whose cells to compare (default: cpu)")
    up.add_argument("--json", action="store_true", help="print the result as JSON (harness/schemas/upgrade.schema.json)")
    up.add_argument("--fail-on", metavar="KIND[,KIND]", help="exit 1 when a change of one of these kinds is present")
    lint = sub.add_parser("lint", help="find the corpus's statically visible pitfalls in your code")
    from harness.lint.cli import add_arguments

    add_arguments(lint)
    lb = sub.add_parser("lint-bench", help="pitfalls lint and TorchFix on every case's broken and fixed programs")
    lb.add_argument("--json", action="store_true", help="print the table as JSON")
    lb.add_argument("--write", metavar="PATH", help="also write it to PATH (reports/lint-bench.json is the committed one)")
    imp = sub.add_parser("import-report", help="check a report made elsewhere (a GPU, another machine) and file it under reports/")
    imp.add_argument("file", metavar="FILE", help="a report written by `pitfalls run --json`")
    imp.add_argument("--reports", default="reports", metavar="DIR", help="folder of reports (default: ./reports)")
    imp.add_argument("--replace", action="store_true", help="file it over an earlier report of the same torch and device")
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.cases is None:
            from harness.loader import default_cases_dir

            args.cases = str(default_cases_dir())
        if args.command in NEEDS_TORCH and importlib.util.find_spec("torch") is None:
            raise UsageError("torch is not installed here: torch-pitfalls runs against the torch you install "
                             "(pip install torch, or the build for your platform), and never installs one")
        commands = {"list": cmd_list, "show": cmd_show, "run": cmd_run, "matrix": cmd_matrix, "upgrade": cmd_upgrade,
                    "import-report": cmd_import, "lint": cmd_lint,
                    "lint-bench": cmd_lint_bench}
        return commands[args.command](args)
    except UsageError as exc:
        print(f"pitfalls: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `pitfalls show ID | head`: the reader has seen enough
        sys.stdout = None
        return 0


def cmd_lint(args) -> int:
    from harness.lint.cli import run_lint

    return run_lint(args, usage_error=UsageError)


def cmd_lint_bench(args) -> int:
    from harness.lint.bench import run_bench_command

    return run_bench_command(args, usage_error=UsageError)


def cmd_import(args) -> int:
    from harness.import_cli import run_import

    return run_import(args)


def _load(args):
    """The usable cases, and the files that could not be loaded (each named on stderr)."""
    from harness.loader import LoadError, load_corpus

    try:
        cases, errors = load_corpus(Path(args.cases))
    except LoadError as exc:  # the folder itself is missing
        raise UsageError(str(exc)) from None
    for err in errors:
        print(f"pitfalls: malformed case: {err}", file=sys.stderr)
    return cases, errors


def _select(cases, ids):
    by_id = {lc.id: lc for lc in cases}
    for case_id in ids:
        if case_id not in by_id:
            raise UsageError(f"unknown case id {case_id!r} (see 'pitfalls list')")
    return [by_id[i] for i in dict.fromkeys(ids)] if ids else cases


def cmd_list(args) -> int:
    from harness.versions import torch_version

    version = torch_version()
    rows = [("id", "topic", "kind", "devices", "affects", f"expected on {version}")]
    cases, errors = _load(args)
    for lc in cases:
        c = lc.case
        expected = [d for d in c.devices if c.expected(version, d)]
        rows.append((c.id, lc.topic, c.kind, ",".join(c.devices), c.affects_text, ",".join(expected) or "no"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    return EXIT_FAILED if errors else 0


def cmd_show(args) -> int:
    from harness.story import render_story

    (lc,) = _select(_load(args)[0], [args.id])
    print(render_story(lc.path))
    print(claims_text(lc, args))
    return 0


def claims_text(lc, args) -> str:
    """What the case's claims rest on, from the recorded matrix (``reports/`` beside ``--cases``)."""
    from harness.claims import all_claims
    from harness.matrix import load_matrix
    from harness.report import ReportError

    reports = Path(args.cases).parent / "reports"
    try:
        m = load_matrix(reports, args.cases)
    except ReportError as exc:
        return f"Evidence: not observed ({exc.problem})"
    return "Evidence (recorded matrix, reports/):\n" + "\n".join(f"  - {line}" for line in all_claims(lc.case, m))


def cmd_run(args) -> int:
    devices = list(dict.fromkeys(args.device or DEVICES))
    for d in devices:
        if d not in DEVICES:
            raise UsageError(f"unknown device {d!r} (known: {', '.join(DEVICES)})")
    if args.json is not None:
        _check_writable(args.json)
    from harness.environment import environment_error

    error = environment_error("nothing was run")
    if error:  # verdicts here would blame the cases for the environment: none are given
        raise UsageError(error)
    from harness.report import build_report, summary_table, write_report
    from harness.runner import load_error_record, run_case
    from harness.versions import torch_version

    cases, errors = _load(args)
    selected = _select(cases, args.ids)
    started, version = dt.datetime.now(dt.timezone.utc), torch_version()
    jobs = [(lc, d) for lc in selected for d in devices]
    # A file that cannot be loaded is an `error` of the whole run, not a reason to run nothing.
    records, t0 = ([] if args.ids else [load_error_record(e) for e in errors]), time.perf_counter()
    for n, (lc, device) in enumerate(jobs, 1):
        record = run_case(lc, device, version)
        records.append(record)
        if not args.quiet:
            print(f"[{n:>{len(str(len(jobs)))}}/{len(jobs)}] {record.case} [{device}] {record.outcome}"
                  f" ({record.duration_s:.2f} s)", file=sys.stderr, flush=True)
    print(summary_table(records))
    print(f"torch {version}; {time.perf_counter() - t0:.1f} s")
    for r in records:
        if r.failed:
            print(f"  {r.case} [{r.device}] {r.outcome}: {r.detail}")
    for r in records:
        if r.outcome == "unverified":
            print(f"  {r.case} [{r.device}] unverified: {r.detail}")
    skips = Counter((r.device, r.detail) for r in records if r.outcome == "skipped")
    for (device, reason), n in skips.items():
        print(f"  {n} skipped on {device}: {reason}")
    if args.json is not None:
        try:
            write_report(build_report(records, started), args.json)
        except OSError as exc:  # the folder went away or filled up while the cases ran
            raise UsageError(f"--json {args.json}: cannot be written ({exc.strerror or exc})") from None
        print(f"report written to {args.json}")
    return EXIT_FAILED if any(r.failed for r in records) else 0


def cmd_matrix(args) -> int:
    from harness.matrix_cli import run_matrix_command

    return run_matrix_command(args, usage_error=UsageError)


def cmd_upgrade(args) -> int:
    from harness.upgrade_cli import run_upgrade_command

    return run_upgrade_command(args, usage_error=UsageError)


def _check_writable(text: str) -> None:
    """Refuse, before running anything, a report path that cannot be written: the nearest
    existing folder on the way must take a file (tried for real: permissions, read-only mounts)."""
    import tempfile

    if not text.strip():
        raise UsageError("--json: the report path is empty")
    path = Path(text)
    if path.is_dir():
        raise UsageError(f"--json {path}: is a directory")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise UsageError(f"--json {path}: {parent} is a file, not a folder")
            try:
                tempfile.TemporaryFile(dir=parent).close()
            except OSError as exc:
                raise UsageError(f"--json {path}: {parent} is not writable ({exc.strerror or exc})") from None
            break


if __name__ == "__main__":
    sys.exit(main())
