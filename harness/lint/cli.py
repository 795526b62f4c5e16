"""``pitfalls lint PATH... [--format text|json|sarif] [--select ID,..] [--ignore ID,..]
[--torch X.Y | --all-versions]``: exit 1 when something is found, 0 when nothing, 2 on bad input;
and ``pitfalls lint-bench`` (harness/lint/bench.py)."""
from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

from harness.lint import PARSE_ERROR, RULES_BY_ID, Finding, active_rules, lint_text, python_files
from harness.lint.sarif import sarif

EXIT_FOUND = 1


def installed_torch() -> str | None:
    """The torch this environment has, read from its metadata (importing torch takes seconds)."""
    try:
        return metadata.version("torch")
    except metadata.PackageNotFoundError:
        return None


def add_commands(sub) -> None:
    lint = sub.add_parser("lint", help="find the corpus's statically visible pitfalls in your code")
    add_arguments(lint)
    lint.set_defaults(handler=run_lint)
    lb = sub.add_parser("lint-bench", help="pitfalls lint and TorchFix on every case's broken and fixed programs")
    lb.add_argument("--json", action="store_true", help="print the table as JSON")
    lb.add_argument("--write", metavar="PATH", help="also write it to PATH (reports/lint-bench.json is the committed one)")
    lb.set_defaults(handler=_lint_bench)


def _lint_bench(args, usage_error) -> int:
    from harness.lint.bench import run_bench_command

    return run_bench_command(args, usage_error)

def add_arguments(p) -> None:
    p.add_argument("paths", nargs="+", metavar="PATH", help="files or folders (every *.py below)")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--select", default="", metavar="ID[,ID]", help="only these rules (id prefixes, e.g. PTF1)")
    p.add_argument("--ignore", default="", metavar="ID[,ID]", help="not these rules (id prefixes)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--torch", metavar="X.Y[.Z]", help="the rules for this torch (default: the installed one)")
    which.add_argument("--all-versions", action="store_true", help="every rule, whatever the torch")


def _codes(text: str, usage_error) -> tuple[str, ...]:
    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    known = [*RULES_BY_ID, PARSE_ERROR]
    for c in codes:
        if not any(k.startswith(c) for k in known):
            raise usage_error(f"no rule id starts with {c!r} (rules: PTF000-{max(RULES_BY_ID)})")
    return codes


def run_lint(args, usage_error) -> int:
    from harness.versions import parse_version, release_of

    select, ignore = _codes(args.select, usage_error), _codes(args.ignore, usage_error)
    if args.all_versions:
        version, said = None, "every release (--all-versions)"
    elif args.torch:
        try:
            version = str(release_of(parse_version(args.torch)))
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        said = f"torch {version} (--torch)"
    else:
        version = installed_torch()
        said = f"torch {version} (installed)" if version else "every release (no torch installed)"
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise usage_error(f"no such file or folder: {missing[0]}")
    rules = active_rules(version, select, ignore)
    findings: list[Finding] = []
    files = python_files(args.paths)
    for path in files:
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            findings.append(Finding(str(path), 1, 1, PARSE_ERROR, f"the file cannot be read ({exc})", None))
            continue
        findings += lint_text(text, str(path), rules,
                              report_parse_errors=not ignore or not any(PARSE_ERROR.startswith(i) for i in ignore))
    if args.format == "json":
        print(json.dumps({"torch": version, "rules": [r.id for r in rules], "files": len(files),
                          "findings": [f.to_json() for f in findings]}, indent=1))
    elif args.format == "sarif":
        print(json.dumps(sarif(findings, rules), indent=1))
    else:
        for f in findings:
            print(f.as_text())
        print(f"pitfalls lint: {len(findings)} finding{'s' if len(findings) != 1 else ''} in {len(files)} file"
              f"{'s' if len(files) != 1 else ''}; {len(rules)} of {len(RULES_BY_ID)} rules apply to {said}",
              file=sys.stderr)
    return EXIT_FOUND if findings else 0
