"""``pitfalls``: one command line over the harness's capabilities, each of which adds its own
commands (its ``cli`` module):

    pitfalls list                      id, topic, kind, devices, affects, expected on this torch
    pitfalls show ID                   the case's story: prose, code and evidence
    pitfalls run [ID ...] [--device cpu|cuda] [--json PATH]                       harness/run/cli.py
    pitfalls matrix [--reports DIR] [--json | --markdown | --check]             harness/matrix/cli.py
    pitfalls upgrade FROM TO [--json] [--fail-on KIND[,KIND]]
    pitfalls import-report FILE [--reports DIR] [--replace]
    pitfalls lint PATH... [--format text|json|sarif] [--select ID] [--ignore ID]
                 [--torch X.Y | --all-versions [--ignore-declared]] [--costs-in-tests] [--preview]
                 [--fix | --diff] [--unsafe-fixes] | [--upgrade FROM TO]
    pitfalls lint-bench [--json] [--write PATH]                                   harness/lint/cli.py
    pitfalls watch [--format text|json|sarif] [--fail] [--pedantic] SCRIPT [ARGS...]  harness/watch/cli.py
    pitfalls explain [TEXT]            the cases behind an error or traceback (stdin)  harness/watch/explain_cli.py

``list`` and ``show`` read the corpus itself and live here. Bad input (an unknown id or device, a
bad option, a malformed case) is one line on stderr and exit status 2; ``run`` exits 1 when any
outcome is mismatch, fix-failed or error.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys

from torch_pitfalls.lint import cli as lint_cli
from torch_pitfalls.loader import load_for_command, select_cases
from torch_pitfalls.matrix import cli as matrix_cli
from torch_pitfalls.run import cli as run_cli
from torch_pitfalls.watch import cli as watch_cli
from torch_pitfalls.watch import explain_cli

EXIT_FAILED, EXIT_USAGE = 1, 2


class UsageError(Exception):
    """Bad input from the user: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):  # argparse prints usage + message; we want one line
        raise UsageError(message)


def _parser() -> argparse.ArgumentParser:
    p = _Parser(prog="pitfalls", description="An executable, verified corpus of PyTorch pitfalls.")
    p.add_argument(
        "--cases",
        default=None,
        metavar="DIR",
        help="the cases folder (default: ./cases, else the corpus installed with the harness)",
    )
    sub = p.add_subparsers(dest="command", required=True, parser_class=_Parser)
    sub.add_parser("list", help="list the cases and whether each symptom is expected on this torch").set_defaults(
        handler=cmd_list, needs_torch=True
    )
    show = sub.add_parser("show", help="print a case's story (prose and code)")
    show.add_argument("id")
    show.set_defaults(handler=cmd_show, needs_torch=True)
    for capability in (run_cli, matrix_cli, lint_cli, watch_cli, explain_cli):
        capability.add_commands(sub)
    return p


def main(argv: list[str] | None = None) -> int:
    try:
        args = _parser().parse_args(argv)
        if args.cases is None:
            from torch_pitfalls.loader import default_cases_dir

            args.cases = str(default_cases_dir())
        if getattr(args, "needs_torch", False) and importlib.util.find_spec("torch") is None:
            raise UsageError(
                "torch is not installed here: torch-pitfalls runs against the torch you install "
                "(pip install torch, or the build for your platform), and never installs one"
            )
        return args.handler(args, UsageError)
    except UsageError as exc:
        print(f"pitfalls: error: {exc}", file=sys.stderr)
        return EXIT_USAGE
    except BrokenPipeError:  # `pitfalls show ID | head`: the reader has seen enough
        sys.stdout = None
        return 0


def cmd_list(args, usage_error) -> int:
    from torch_pitfalls.run.devices import torch_version

    version = torch_version()
    rows = [("id", "topic", "kind", "devices", "affects", f"expected on {version}")]
    cases, errors = load_for_command(args.cases, usage_error)
    for lc in cases:
        c = lc.case
        expected = [d for d in c.devices if c.expected(version, d)]
        rows.append((c.id, lc.topic, c.kind, ",".join(c.devices), c.affects_text, ",".join(expected) or "no"))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(cell.ljust(w) for cell, w in zip(r, widths)).rstrip())
    return EXIT_FAILED if errors else 0


def cmd_show(args, usage_error) -> int:
    from torch_pitfalls.story import render_story

    (lc,) = select_cases(load_for_command(args.cases, usage_error)[0], [args.id], usage_error)
    print(render_story(lc.path))
    print(claims_text(lc, args))
    return 0


def claims_text(lc, args) -> str:
    """What the case's claims rest on, from the recorded matrix (``reports/`` beside ``--cases``)."""
    from torch_pitfalls.matrix import default_reports_dir, load_matrix
    from torch_pitfalls.matrix.claims import all_claims
    from torch_pitfalls.run.report import ReportError

    reports = default_reports_dir(args.cases)
    try:
        m = load_matrix(reports, args.cases)
    except ReportError as exc:
        return f"Evidence: not observed ({exc.problem})"
    return "Evidence (recorded matrix, reports/):\n" + "\n".join(f"  - {line}" for line in all_claims(lc.case, m))


if __name__ == "__main__":
    sys.exit(main())
