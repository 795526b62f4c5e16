"""``pitfalls lint [PATH...] [--format text|json|sarif] [--select ID,..] [--ignore ID,..]
[--torch X.Y | --all-versions [--ignore-declared]] [--costs-in-tests] [--preview] [--fix [--unsafe-fixes] | --diff]
[--upgrade FROM TO]``: exit 1
when something is found (or, with ``--diff``, would change), 0 when nothing, 2 on bad input; no
PATH (what pre-commit passes when no staged file matches) checks nothing and exits 0. And
``pitfalls lint-bench`` (harness/lint/bench.py).

``--fix`` applies the safe fixes (harness/lint/fixes.py: proven by running them on every release
of the matrix where the rule applies, recorded in reports/lint-fix-proofs.json), ``--unsafe-fixes``
the others too; a fix that is not applied says why. ``--upgrade FROM TO`` lists the findings whose
case's observed behaviour changes between two recorded releases (harness/lint/upgrade.py).

Which torch: ``--torch X.Y`` that release; no option, the installed one; ``--all-versions`` every
release each file's package declares it supports (harness/lint/declared.py: the nearest
pyproject.toml, setup.cfg or dist-info METADATA; every release where none names torch), and with
``--ignore-declared`` every release whatever is declared. A declaration that cannot be read is a
usage error (exit 2) naming the file. Rules whose harm is a cost (time, memory) are quiet in test
code unless ``--costs-in-tests`` (harness/lint/scope.py). A rule fires where what it matches is
torch's; ``--preview`` adds its matches on objects of unknown type, labelled (rules/base.py UNSURE).
"""

from __future__ import annotations

import json
import sys
from importlib import metadata
from pathlib import Path

from torch_pitfalls.lint import PARSE_ERROR, RULES_BY_ID, Finding, active_rules, lint_text, python_files
from torch_pitfalls.lint.declared import DeclarationError
from torch_pitfalls.lint.memory import collected_between_files
from torch_pitfalls.lint.releases import Releases
from torch_pitfalls.lint.sarif import sarif
from torch_pitfalls.lint.scope import FileRules

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
    lb.add_argument(
        "--write", metavar="PATH", help="also write it to PATH (reports/lint-bench.json is the committed one)"
    )
    lb.set_defaults(handler=_lint_bench)


def _lint_bench(args, usage_error) -> int:
    from torch_pitfalls.lint.bench import run_bench_command

    return run_bench_command(args, usage_error)


FIX_HELP = (
    "apply the safe fixes: a fix is safe when reports/lint-fix-proofs.json shows it proven (its rule's "
    "cases' broken programs, fixed by it, run clean and pass the cases' checks) on every release of the "
    "matrix where the rule applies, and it does not change what the code means; the others are listed "
    "with the reason"
)


def add_arguments(p) -> None:
    p.add_argument(
        "paths", nargs="*", metavar="PATH", help="files or folders (every *.py below); none: nothing to check (exit 0)"
    )
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--select", default="", metavar="ID[,ID]", help="only these rules (id prefixes, e.g. PTF1)")
    p.add_argument("--ignore", default="", metavar="ID[,ID]", help="not these rules (id prefixes)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--torch", metavar="X.Y[.Z]", help="the rules for this torch (default: the installed one)")
    which.add_argument(
        "--all-versions",
        action="store_true",
        help="every release the code declares it supports (the nearest pyproject.toml [project] "
        "dependencies, setup.cfg install_requires, or an installed package's dist-info METADATA: "
        "Requires-Dist: torch...); every release where it declares none",
    )
    p.add_argument(
        "--ignore-declared", action="store_true", help="with --all-versions: every release, whatever the code declares"
    )
    p.add_argument(
        "--costs-in-tests",
        "--speed-in-tests",
        dest="costs_in_tests",
        action="store_true",
        help="run the rules whose harm is a cost (time: PTF020; memory: PTF016) in test code too: by default "
        "they are quiet in test_*.py, *_test.py, conftest.py, testing.py/testing_utils.py/test_utils.py and "
        "under tests/, test/, testing/ or test_utils/ folders (a copy made once, or a graph kept for one small "
        "batch, changes nothing a test checks); correctness rules always run there",
    )
    p.add_argument(
        "--preview",
        action="store_true",
        help="also report a rule's pattern on an object not known to be torch's (a method name such as "
        ".cholesky() or load_state_dict(strict=False) on a receiver the bindings cannot tell the type of), "
        "and the rules whose harm depends on what the code does not show (PTF020: a tensor made on the CPU and "
        "copied; PTF263: a flatten size written in; PTF281: a SummaryWriter never closed; PTF282: torch seeded, "
        "NumPy or random not), labelled [preview: why]; by default a rule fires only where what it matches is "
        "torch's and its harm follows from the code",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--fix", action="store_true", help=FIX_HELP)
    mode.add_argument(
        "--diff",
        action="store_true",
        help="print what --fix would change as a unified diff, write nothing (exit 1 if it would change something)",
    )
    mode.add_argument(
        "--upgrade",
        nargs=2,
        metavar=("FROM", "TO"),
        help="only the findings whose case's observed behaviour changes between these two recorded "
        "releases, by the release where it changes (the data of `pitfalls upgrade FROM TO`)",
    )
    p.add_argument(
        "--unsafe-fixes", action="store_true", help="with --fix or --diff: apply the fixes that are not proven safe too"
    )


def _codes(text: str, usage_error) -> tuple[str, ...]:
    codes = tuple(c.strip().upper() for c in text.split(",") if c.strip())
    known = [*RULES_BY_ID, PARSE_ERROR]
    for c in codes:
        if not any(k.startswith(c) for k in known):
            raise usage_error(f"no rule id starts with {c!r} (rules: PTF000-{max(RULES_BY_ID)})")
    return codes


def run_lint(args, usage_error) -> int:
    from torch_pitfalls.versions import parse_version, release_of

    select, ignore = _codes(args.select, usage_error), _codes(args.ignore, usage_error)
    if args.unsafe_fixes and not (args.fix or args.diff):
        raise usage_error("--unsafe-fixes goes with --fix or --diff")
    if args.upgrade:  # every rule: the releases are the span's, not the installed torch's
        if args.torch or args.all_versions:
            raise usage_error("--upgrade FROM TO picks the releases itself: drop --torch/--all-versions")
        matrix = _matrix(args, usage_error)
        from torch_pitfalls.lint.upgrade import check_span

        check_span(*args.upgrade, matrix.versions, usage_error)
        version, said = None, f"the upgrade {args.upgrade[0]} -> {args.upgrade[1]} (every rule)"
    elif args.all_versions:
        version, said = (
            None,
            (
                "every release (--all-versions --ignore-declared)"
                if args.ignore_declared
                else "every release each package declares (--all-versions)"
            ),
        )
    elif args.torch:
        try:
            version = str(release_of(parse_version(args.torch)))
        except ValueError as exc:
            raise usage_error(str(exc)) from None
        said = f"torch {version} (--torch)"
    else:
        version = installed_torch()
        said = f"torch {version} (installed)" if version else "every release (no torch installed)"
    if args.ignore_declared and not args.all_versions:
        raise usage_error(
            "--ignore-declared goes with --all-versions (--torch and the installed torch name one release)"
        )
    if not args.paths:  # pre-commit skips the hook when no staged file matches (unless always_run); xargs may not
        print("pitfalls lint: no files given: nothing to check", file=sys.stderr)
        return 0
    missing = [p for p in args.paths if not Path(p).exists()]
    if missing:
        raise usage_error(f"no such file or folder: {missing[0]}")
    fixed = (
        None
        if args.all_versions and not args.ignore_declared
        else (Releases.every() if version is None else Releases.one(version))
    )
    scope = FileRules(fixed, select, ignore, costs_in_tests=args.costs_in_tests)
    parse_errors = not ignore or not any(PARSE_ERROR.startswith(i) for i in ignore)
    files = python_files(args.paths)
    fixes = FixInfo(args)
    try:
        scope.for_all(files)  # every declaration read before anything is written or printed
    except DeclarationError as exc:
        raise usage_error(f"{exc} (fix it, or pass --ignore-declared)") from None
    if args.fix or args.diff:
        return _fix_files(args, files, scope, parse_errors, fixes, version, said)
    findings: list[Finding] = []
    with collected_between_files() as file_done:
        for path in files:
            text = _read(path, findings)
            if text is not None:
                rules, releases = scope.for_path(path)
                findings += lint_text(
                    text, str(path), rules, report_parse_errors=parse_errors, releases=releases, preview=args.preview
                )
            file_done()
    if args.upgrade:
        return _upgrade_report(args, findings, matrix, len(files))
    _report(args, findings, scope, len(files), version, said, fixes)
    return EXIT_FOUND if findings else 0


def _read(path: Path, findings: list) -> str | None:
    try:  # newline="": a file's own line endings are kept when --fix writes it back
        with open(path, encoding="utf-8", newline="") as f:
            return f.read()
    except (OSError, UnicodeDecodeError) as exc:
        findings.append(Finding(str(path), 1, 1, PARSE_ERROR, f"the file cannot be read ({exc})", None))
        return None


def _matrix(args, usage_error):
    from torch_pitfalls.matrix import default_reports_dir, load_matrix
    from torch_pitfalls.run.report import ReportError

    try:
        return load_matrix(default_reports_dir(args.cases), args.cases)
    except ReportError as exc:
        raise usage_error(f"--upgrade needs the recorded matrix: {exc}") from None


class FixInfo:
    """Whether a finding has a fix (its rule's), and whether that fix is safe (harness/lint/fixes.py)."""

    def __init__(self, args):
        self.args = args
        self._why: dict[str, str | None] = {}
        self._proofs = None

    def unsafe_because(self, rule_id: str) -> str | None:
        if rule_id not in self._why:
            from torch_pitfalls.lint import rule_ranges
            from torch_pitfalls.lint.fixes import load_proofs, safety
            from torch_pitfalls.matrix import DEFAULT_VERSIONS, default_reports_dir

            if self._proofs is None:
                self._proofs = load_proofs(default_reports_dir(self.args.cases))
            rule = RULES_BY_ID[rule_id]
            self._why[rule_id] = safety(rule, self._proofs, DEFAULT_VERSIONS, rule_ranges(rule))
        return self._why[rule_id]

    def of(self, finding) -> dict | None:
        from torch_pitfalls.lint.rules import FIXES

        fix = FIXES.get(finding.rule)
        if fix is None:
            return None
        why = self.unsafe_because(finding.rule)
        return {"does": fix.does, "safe": why is None, "why_unsafe": why}

    def allowed(self, rule_id: str) -> str | None:
        """None to apply the rule's fix; else why it is not applied."""
        why = self.unsafe_because(rule_id)
        return None if why is None or self.args.unsafe_fixes else f"unsafe fix ({why}); --unsafe-fixes applies it"


def _text_line(f: Finding, fix: dict | None, refused: str | None = None) -> str:
    line = f.as_text()
    if fix is not None:
        line += " [fix]" if fix["safe"] else f" [unsafe fix: {fix['why_unsafe']}]"
    if refused:
        line += f"\n    not fixed: {refused}"
    return line


def _declared_json(scope: FileRules) -> list[dict]:
    return [
        {"root": str(d.root), "source": str(d.source), "torch": d.text, "releases": str(d.releases)}
        for d in scope.declarations.values()
    ]


def _declared_text(scope: FileRules) -> str:
    if not scope.declarations:
        return ""
    return "".join(f"\n  {d.root}: {d.text} (from {d.source.name})" for d in scope.declarations.values())


def _report(
    args, findings, scope: FileRules, n_files, version, said, fixes: FixInfo, refused: dict | None = None, head=""
) -> None:
    refused = refused or {}
    rules = scope.every_rule() if scope.releases is None else active_rules(scope.releases, scope.select, scope.ignore)
    if args.format == "json":
        print(
            json.dumps(
                {
                    "torch": version,
                    "releases": said,
                    "declared": _declared_json(scope),
                    "rules": [r.id for r in rules],
                    "files": n_files,
                    "findings": [
                        {**f.to_json(), "fix": fixes.of(f), **({"not_fixed": refused[f]} if f in refused else {})}
                        for f in findings
                    ],
                },
                indent=1,
            )
        )
    elif args.format == "sarif":
        print(json.dumps(sarif(findings, rules, fix_of=fixes.of), indent=1))
    else:
        for f in findings:
            print(_text_line(f, fixes.of(f), refused.get(f)))
        print(
            f"pitfalls lint: {head}{len(findings)} finding{'s' if len(findings) != 1 else ''} in {n_files} file"
            f"{'s' if n_files != 1 else ''}; {len(rules)} of {len(RULES_BY_ID)} rules apply to {said}"
            f"{_declared_text(scope)}",
            file=sys.stderr,
        )


def _fix_files(args, files, scope: FileRules, parse_errors, fixes: FixInfo, version, said) -> int:
    import difflib

    from torch_pitfalls.lint.fixes import fix_file_text

    remaining: list[Finding] = []
    refused: dict[Finding, str] = {}
    fixed = changed = 0
    for path in files:
        text = _read(path, remaining)
        if text is None:
            continue
        rules, releases = scope.for_path(path)
        result = fix_file_text(
            text,
            lambda now: lint_text(now, str(path), rules, report_parse_errors=parse_errors, releases=releases),  # noqa: B023 - called in this iteration
            fixes.allowed,
        )
        after = lint_text(result.text, str(path), rules, report_parse_errors=parse_errors, releases=releases)
        why = {(f.line, f.col, f.rule): reason for f, reason in result.refused}
        refused.update({f: why[f.line, f.col, f.rule] for f in after if (f.line, f.col, f.rule) in why})
        remaining += after
        if not result.changed:
            continue
        fixed, changed = fixed + len(result.fixed), changed + 1
        if args.diff:
            sys.stdout.writelines(
                difflib.unified_diff(
                    text.splitlines(keepends=True), result.text.splitlines(keepends=True), f"a/{path}", f"b/{path}"
                )
            )
        else:
            with open(path, "w", encoding="utf-8", newline="") as f:
                f.write(result.text)
    verb = "would fix" if args.diff else "fixed"
    head = f"{verb} {fixed} finding{'s' if fixed != 1 else ''} in {changed} file{'s' if changed != 1 else ''}; "
    if args.diff:
        print(f"pitfalls lint: {head}{len(remaining)} would remain", file=sys.stderr)
        return EXIT_FOUND if changed else 0
    _report(args, remaining, scope, len(files), version, said, fixes, refused, head=head + "left: ")
    return EXIT_FOUND if remaining else 0


def _upgrade_report(args, findings, matrix, n_files) -> int:
    from torch_pitfalls.lint import upgrade as view
    from torch_pitfalls.matrix.upgrade import upgrade

    start, end = args.upgrade
    found = view.upgrade_view(findings, RULES_BY_ID, upgrade(matrix, start, end, "cpu"))
    if args.format == "json":
        print(json.dumps(found, indent=1))
    elif args.format == "sarif":
        changes: dict[tuple, list] = {}  # a finding listed under several releases: all its changes
        for g in found["releases"]:
            for f in g["findings"]:
                changes.setdefault((f["path"], f["line"], f["col"], f["rule"]), []).extend(f["changes"])
        kept = [f for f in findings if (f.path, f.line, f.col, f.rule) in changes]
        log = sarif(
            kept,
            [RULES_BY_ID[r] for r in sorted({f.rule for f in kept})],
            extra=lambda f: {"upgrade": {"from": start, "to": end, "changes": changes[f.path, f.line, f.col, f.rule]}},
        )
        print(json.dumps(log, indent=1))
    else:
        print(view.text(found))
        print(
            f"pitfalls lint: {found['findings']} of {len(findings)} findings in {n_files} file"
            f"{'s' if n_files != 1 else ''} have a case that changes from {start} to {end}",
            file=sys.stderr,
        )
    return EXIT_FOUND if found["findings"] else 0
