"""``pitfalls lint``: the corpus's statically visible pitfalls found in your own code.

Each rule (harness/lint/rules/) belongs to the case(s) that prove it and fires only where its
case's ``affects`` holds for the torch in question (the installed one, ``--torch X.Y``, or with
``--all-versions`` every release the file's package declares: scope.py, declared.py). A ``# noqa: PTF101`` comment on the line (or a bare ``# noqa``)
silences a finding there. A file that does not parse is a finding of its own (``PTF000``): nothing
else in it is checked. A SyntaxError that is a pitfall the corpus knows (``.cuda(async=True)``) is
a rule's (its ``on_syntax_error``: PTF003 finds it in the tokens): reported, repaired in memory,
and the rest of the file is checked as usual.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import re
from dataclasses import asdict, dataclass
from pathlib import Path

from torch_pitfalls.casefile import read_case
from torch_pitfalls.lint import reach
from torch_pitfalls.lint.engine import walk
from torch_pitfalls.lint.releases import Releases
from torch_pitfalls.lint.rules import RULES, Rule

PARSE_ERROR = "PTF000"
NOQA = re.compile(r"#\s*noqa(?::\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*))?", re.I)
RULES_BY_ID = {r.id: r for r in RULES}
# the rules that read a file that does not parse, all of them whatever is selected: their repair
# lets the other rules check the rest of the file
SYNTAX_RULES = tuple(r for r in RULES if r.on_syntax_error is not None)


PREVIEW_LABEL = "[preview: on an object not known to be torch's]"


@dataclass(frozen=True)
class Finding:
    path: str
    line: int
    col: int
    rule: str
    message: str
    case: str | None  # None for a file that does not parse
    preview: bool = False  # reported only with --preview: the rule's pattern on an object of unknown type
    unreached: bool = False  # in code nothing in its application calls (reach.py): reported only with --preview

    def as_text(self) -> str:
        rule = RULES_BY_ID.get(self.rule)
        # a rule that reports only with --preview says why (Rule.preview_only); any other, on an unknown receiver
        why = f"[preview: {rule.preview_only}]" if rule is not None and rule.preview_only else PREVIEW_LABEL
        why = reach.PREVIEW_LABEL if self.unreached else why
        label = f" {why}" if self.preview else ""
        return f"{self.path}:{self.line}:{self.col}: {self.rule} {self.message}{label}"

    def to_json(self) -> dict:
        # the case's page on the site (relative to the site's root), where the pitfall is run and explained
        return {**asdict(self), "page": f"cases/{self.case}.html" if self.case else None}


def cases_dir() -> Path:
    from torch_pitfalls.loader import default_cases_dir

    return default_cases_dir()


def rule_ranges(rule: Rule, cases: Path | None = None) -> tuple[str, ...]:
    """The version ranges of the rule's cases, read from their files (once per process and folder: a run
    asks for every rule once per release set its packages declare)."""
    return _ranges(rule.id, rule.cases, Path(cases) if cases else cases_dir())


@functools.lru_cache(maxsize=None)
def _ranges(rule_id: str, case_ids: tuple[str, ...], root: Path) -> tuple[str, ...]:
    out = []
    for case_id in case_ids:
        files = list(root.glob(f"*/{case_id.replace('-', '_')}.py"))
        if not files:
            raise LookupError(f"rule {rule_id}: no case {case_id!r} under {root}")
        out.extend(read_case(files[0]).affects_ranges)
    return tuple(out)


def active_rules(torch_version: str | Releases | None, select=(), ignore=(), cases: Path | None = None) -> list[Rule]:
    """The rules that apply to this torch (all when ``torch_version`` is None), or to some release of
    a set of releases (a package's declared range: releases.py), selected by id prefix."""
    if isinstance(torch_version, Releases):
        releases = torch_version
    else:
        releases = Releases.every() if torch_version is None else Releases.one(torch_version)
    chosen = []
    for rule in RULES:
        if select and not any(rule.id.startswith(s) for s in select):
            continue
        if any(rule.id.startswith(i) for i in ignore):
            continue
        if releases.meets(rule_ranges(rule, cases)):
            chosen.append(rule)
    return chosen


def _silenced(line_text: str, rule: str) -> bool:
    found = NOQA.search(line_text)
    if not found:
        return False
    codes = found.group("codes")
    return codes is None or rule.upper() in {c.strip().upper() for c in codes.split(",")}


def lint_text(
    text: str,
    path: str,
    rules: list[Rule],
    report_parse_errors: bool = True,
    releases: Releases | None = None,
    preview: bool = False,
) -> list[Finding]:
    """The findings in one file's text; ``releases``: the torch it runs on (every release if None),
    for the rules whose premise depends on which of their case's ranges the code meets (PTF126);
    ``preview``: also the matches on objects not known to be torch's, labelled."""
    lines = text.splitlines()
    findings = []
    # a byte-order mark starts some files (Python reads past it: the file runs); the tree is read
    # without it, as the interpreter does, its first line's columns one short
    source = text[1:] if text.startswith("\ufeff") else text
    try:
        tree = ast.parse(source, filename=path)
    except SyntaxError as exc:
        # The syntax errors the corpus knows are its rules' (on_syntax_error): reported where asked,
        # and repaired in memory; the rest of the file is read from the repaired text (same lines
        # and columns), as a linter that goes on.
        asked, repaired, found = {r.id for r in rules}, source, False
        for rule in SYNTAX_RULES:
            where, repaired = rule.on_syntax_error(repaired)
            found = found or bool(where)
            if rule.id in asked:
                findings += [Finding(path, line, col, rule.id, rule.message, rule.case) for line, col in where]
        tree, exc = _parse_repaired(repaired, path) if found else (None, exc)
        if tree is None:
            if report_parse_errors:
                findings.append(
                    Finding(
                        path,
                        exc.lineno or 1,
                        exc.offset or 1,
                        PARSE_ERROR,
                        f"the file does not parse ({exc.msg}); nothing else in it was checked",
                        None,
                    )
                )
            return [f for f in findings if not _silenced(lines[f.line - 1] if 0 < f.line <= len(lines) else "", f.rule)]
    rules = _able_to_match(rules, source)
    for hit in walk(tree, rules, releases, path, preview):
        rule = hit.rule
        findings.append(Finding(path, hit.line, hit.col, rule.id, rule.message, rule.case, not hit.sure))
    unique = sorted(set(findings), key=lambda f: (f.line, f.col, f.rule))
    unique = _in_reached_code(unique, tree, path, preview)
    return [f for f in unique if not _silenced(lines[f.line - 1] if 0 < f.line <= len(lines) else "", f.rule)]


def _in_reached_code(findings: list[Finding], tree: ast.Module, path: str, preview: bool) -> list[Finding]:
    """The findings, those in a function nothing in the application calls dropped (with ``preview``: kept,
    labelled), reach.py; asked only of a file with findings."""
    dead = reach.unreached(tree, path, {f.line for f in findings}) if findings else set()
    if not dead:
        return findings
    if not preview:
        return [f for f in findings if f.line not in dead]
    return [dataclasses.replace(f, preview=True, unreached=True) if f.line in dead else f for f in findings]


def _able_to_match(rules: list[Rule], source: str) -> list[Rule]:
    """The rules that can match in this text: those with no ``needs``, and those one of whose words the
    text holds (each word looked up once per file, however many rules name it)."""
    present: dict[str, bool] = {}
    kept = []
    for rule in rules:
        for word in rule.needs:
            found = present.get(word)
            if found is None:
                found = present[word] = word in source
            if found:
                kept.append(rule)
                break
        else:
            if not rule.needs:
                kept.append(rule)
    return kept


def _parse_repaired(repaired: str, path: str):
    """The tree of the repaired text, or (None, the error that is left)."""
    try:
        return ast.parse(repaired, filename=path), None
    except SyntaxError as left:
        return None, left


def python_files(paths) -> list[Path]:
    out = []
    for p in map(Path, paths):
        if p.is_dir():
            out.extend(sorted(q for q in p.rglob("*.py") if not any(part.startswith(".") for part in q.parts)))
        else:
            out.append(p)
    return out
