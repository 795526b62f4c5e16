"""``pitfalls run [ID ...] [--device cpu|cuda] [--json PATH] [-q]``: run cases, print a summary,
write the report; exit 1 when any outcome is mismatch, fix-failed or error."""

from __future__ import annotations

import datetime as dt
import sys
import time
from collections import Counter
from pathlib import Path

from torch_pitfalls.case import DEVICES
from torch_pitfalls.loader import load_for_command, select_cases

EXIT_FAILED = 1


def add_commands(sub) -> None:
    run = sub.add_parser("run", help="run cases on devices and summarise")
    run.add_argument("ids", nargs="*", metavar="ID", help="case ids (default: all)")
    run.add_argument(
        "--device", action="append", metavar="DEVICE", help=f"{' or '.join(DEVICES)} (repeatable; default: both)"
    )
    run.add_argument("--json", metavar="PATH", help="write the JSON report to PATH (folders are created)")
    run.add_argument("-q", "--quiet", action="store_true", help="no progress lines")
    run.set_defaults(handler=cmd_run, needs_torch=True)


def cmd_run(args, usage_error) -> int:
    devices = list(dict.fromkeys(args.device or DEVICES))
    for d in devices:
        if d not in DEVICES:
            raise usage_error(f"unknown device {d!r} (known: {', '.join(DEVICES)})")
    if args.json is not None:
        _check_writable(args.json, usage_error)
    from torch_pitfalls.run.environment import environment_error

    error = environment_error("nothing was run")
    if error:  # verdicts here would blame the cases for the environment: none are given
        raise usage_error(error)
    from torch_pitfalls.run.devices import torch_version
    from torch_pitfalls.run.report import build_report, summary_table, write_report
    from torch_pitfalls.run.runner import load_error_record, run_case

    cases, errors = load_for_command(args.cases, usage_error)
    selected = select_cases(cases, args.ids, usage_error)
    started, version = dt.datetime.now(dt.timezone.utc), torch_version()
    jobs = [(lc, d) for lc in selected for d in devices]
    # A file that cannot be loaded is an `error` of the whole run, not a reason to run nothing.
    records, t0 = ([] if args.ids else [load_error_record(e) for e in errors]), time.perf_counter()
    for n, (lc, device) in enumerate(jobs, 1):
        record = run_case(lc, device, version)
        records.append(record)
        if not args.quiet:
            print(
                f"[{n:>{len(str(len(jobs)))}}/{len(jobs)}] {record.case} [{device}] {record.outcome}"
                f" ({record.duration_s:.2f} s)",
                file=sys.stderr,
                flush=True,
            )
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
            raise usage_error(f"--json {args.json}: cannot be written ({exc.strerror or exc})") from None
        print(f"report written to {args.json}")
    return EXIT_FAILED if any(r.failed for r in records) else 0


def _check_writable(text: str, usage_error) -> None:
    """Refuse, before running anything, a report path that cannot be written: the nearest
    existing folder on the way must take a file (tried for real: permissions, read-only mounts)."""
    import tempfile

    if not text.strip():
        raise usage_error("--json: the report path is empty")
    path = Path(text)
    if path.is_dir():
        raise usage_error(f"--json {path}: is a directory")
    for parent in path.parents:
        if parent.exists():
            if not parent.is_dir():
                raise usage_error(f"--json {path}: {parent} is a file, not a folder")
            try:
                tempfile.TemporaryFile(dir=parent).close()
            except OSError as exc:
                raise usage_error(f"--json {path}: {parent} is not writable ({exc.strerror or exc})") from None
            break
