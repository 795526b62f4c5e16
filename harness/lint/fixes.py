"""``pitfalls lint --fix``: how a fix is made and applied to a file's text, and which fixes are safe.

Each fix lives in its rule's module (harness/lint/rules/ptf*.py), beside the check that makes the
finding, as the rule record's ``fix`` (a ``Fix`` of this module). This module holds what they are
made of: a file's ``Source``, ``Edit``, ``Refused``, the edits several fixes share, applying the
fixes of a file's findings (``fix_text``, ``fix_file_text``), and the proofs that make one safe.

A fix is a set of text edits placed by the finding's position: the rule's node is found again by
re-parsing the file (line and column, then the shape the fix needs), and the edit is made at the
node's exact ``ast`` positions, so the rest of the file keeps its formatting. ``.cuda(async=True)``
does not parse: its fix works on the lines' text. A fix that cannot be placed (an unusual shape of
code) is refused with the reason, and a set of edits that would leave a file that does not parse is
refused whole: nothing is written.

Which fixes are *safe* (applied by ``--fix``; the others need ``--unsafe-fixes``) is observed, not
assumed: ``python -m torch_pitfalls.lint.fix_proofs`` applies each fix to its cases' broken programs and
runs them (harness/lint/fix_proofs.py), and the matrix build records that on every release in
``reports/lint-fix-proofs.json``. A fix is safe when that file shows it proven, for every case of
its rule, on every release of the matrix (``torch_pitfalls.matrix.DEFAULT_VERSIONS``) where the rule
applies (a release inside one of its cases' ``affects`` ranges), and the fix has no ``caution``
(a fix that changes what the program means, such as ``weights_only=False``, is never safe). A
release with no record, or with a record made from another text of the rule's module (each fix's
record keeps that module's hash: ``fix_sha256``), makes it unsafe too: "not observed on X". A
proof hangs on its own rule's module only, so editing one rule leaves every other fix proven. The
edits here that fixes share are not in that key: tests/lint/test_fix.py proves every fix again on
the local torch, and after such a change ``make fix-versions`` records every release again.
"""

from __future__ import annotations

import ast
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from torch_pitfalls.lint.names import dotted, import_map
from torch_pitfalls.lint.walking import children, walk

PROOFS_FILE = "lint-fix-proofs.json"  # beside the recorded reports


def fix_sha256(rule_id: str) -> str:
    """The hash of the text of the rule's module, which holds its check, its record and its fix: a
    proof recorded from another text of it is stale (a change elsewhere leaves it standing)."""
    import hashlib

    from torch_pitfalls.lint.rules import module_of

    return hashlib.sha256(Path(module_of(rule_id).__file__).read_bytes()).hexdigest()


class Refused(Exception):
    """The fix cannot be placed here; the message says why."""


@dataclass(frozen=True)
class Edit:
    start: int  # character offsets into the file's text
    end: int
    text: str


class Source:
    """A file's text with what the fixes need: its tree (parsed once, when needed), character
    offsets of ``ast`` positions (which count UTF-8 bytes), the nodes at a position, parents."""

    def __init__(self, text: str):
        self.text = text
        self.lines = text.splitlines(keepends=True)
        self._starts = [0]
        for line in self.lines:
            self._starts.append(self._starts[-1] + len(line))
        self._tree: ast.Module | None = None
        self._parents: dict[int, ast.AST] | None = None

    @property
    def tree(self) -> ast.Module:
        if self._tree is None:
            try:
                self._tree = ast.parse(self.text)
            except SyntaxError as exc:
                raise Refused(f"the file does not parse ({exc.msg}, line {exc.lineno})") from None
        return self._tree

    def offset(self, line: int, col_bytes: int) -> int:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        return self._starts[line - 1] + len(text.encode("utf-8")[:col_bytes].decode("utf-8", "ignore"))

    def start(self, node: ast.AST) -> int:
        return self.offset(node.lineno, node.col_offset)

    def end(self, node: ast.AST) -> int:
        return self.offset(node.end_lineno, node.end_col_offset)

    def segment(self, node: ast.AST) -> str:
        return self.text[self.start(node) : self.end(node)]

    def at(self, finding, kind=ast.AST) -> list[ast.AST]:
        """The nodes of type ``kind`` that start where the finding is, the smallest first."""
        found = [
            n
            for n in walk(self.tree)
            if isinstance(n, kind) and getattr(n, "lineno", None) == finding.line and n.col_offset == finding.col - 1
        ]
        return sorted(found, key=lambda n: self.end(n) - self.start(n))

    def parent(self, node: ast.AST) -> ast.AST | None:
        if self._parents is None:
            self._parents = {id(c): p for p in walk(self.tree) for c in children(p)}
        return self._parents.get(id(node))

    def torch_name(self) -> str:
        """The name the module binds to ``torch`` itself (``import torch``, ``import torch as T``)."""
        names = [local for local, full in import_map(self.tree).items() if full == "torch"]
        if not names:
            raise Refused("the module does not import torch by name (import torch), which the fix writes")
        return names[0]


# --- the edits the fixes are made of ------------------------------------------------------
def _one(nodes: list, what: str):
    if not nodes:
        raise Refused(f"no {what} at the finding's position")
    return nodes[0]


def _rename_attr(src: Source, node: ast.Attribute, new: str) -> Edit:
    end = src.end(node)  # an attribute's name ends the node: a.b  ->  the last len(b) characters
    return Edit(end - len(node.attr), end, new)


def _items(call: ast.Call) -> list[ast.AST]:
    return sorted([*call.args, *call.keywords], key=lambda n: (n.lineno, n.col_offset))


def _add_argument(src: Source, call: ast.Call, text: str, first: bool = False) -> Edit:
    """``text`` as the call's last argument (or its first)."""
    items = _items(call)
    if not items:
        close = src.end(call) - 1  # the call's text ends with its ")"
        return Edit(close, close, text)
    if first:
        at = src.start(items[0])
        return Edit(at, at, f"{text}, ")
    at = src.end(items[-1])
    return Edit(at, at, f", {text}")


def _drop_keyword(src: Source, call: ast.Call, name: str) -> Edit:
    items = _items(call)
    kw = next(k for k in call.keywords if k.arg == name)
    i = items.index(kw)
    if i > 0:  # ", verbose=True" goes with the comma before it
        return Edit(src.end(items[i - 1]), src.end(kw), "")
    if len(items) > 1:
        return Edit(src.start(kw), src.start(items[1]), "")
    return Edit(src.start(kw), src.end(kw), "")


def _ref(src: Source, finding, last: str) -> ast.AST:
    """The reference the finding is about: of the names and attributes starting at its position
    (``torch``, ``torch.cuda``, ... all do), the one whose last name is ``last``."""
    return _one(
        [n for n in src.at(finding, (ast.Attribute, ast.Name)) if getattr(n, "attr", getattr(n, "id", None)) == last],
        f"reference to {last}",
    )


def _call_of(src: Source, ref: ast.AST) -> ast.Call:
    parent = src.parent(ref)
    if not (isinstance(parent, ast.Call) and parent.func is ref):
        raise Refused("the name is not called here (the fix rewrites a call)")
    return parent


def _torch_chain(src: Source, node: ast.AST, tail: str) -> str:
    """The torch name when ``node`` is written ``<torch>.<tail>``; else refused."""
    torch = src.torch_name()
    if dotted(node) != f"{torch}.{tail}":
        raise Refused(f"written {dotted(node) or 'another way'}, not {torch}.{tail}: rewrite it by hand")
    return torch


# --- the fixes that several rules build from ---------------------------------------------
def _rename_called_method(old_names, new: Callable[[str], str]):
    """A call of ``<anything>.old(...)`` renamed ``<anything>.new(...)``; a bare ``old(...)``
    (imported by name) is refused: its import would need the new name too."""

    def edits(src: Source, finding) -> list[Edit]:
        calls = [
            c for c in src.at(finding, ast.Call) if getattr(c.func, "attr", getattr(c.func, "id", None)) in old_names
        ]
        call = _one(calls, "call of " + "/".join(sorted(old_names)))
        if not isinstance(call.func, ast.Attribute):
            raise Refused(f"{call.func.id} is imported by name: rename it in the import too")
        return [_rename_attr(src, call.func, new(call.func.attr))]

    return edits


def _add_keyword(method_names: tuple[str, ...], text: str, require=lambda call: True, why=""):
    def edits(src: Source, finding) -> list[Edit]:
        calls = [
            c
            for c in src.at(finding, ast.Call)
            if getattr(c.func, "attr", getattr(c.func, "id", None)) in method_names and require(c)
        ]
        return [_add_argument(src, _one(calls, why or "call of " + "/".join(method_names)), text)]

    return edits


def _to_autocast(device: str):
    """``torch.<device>.amp.autocast(...)`` -> ``torch.autocast("<device>", ...)``; positional
    arguments are refused (the old first one is ``enabled``, the new second is ``dtype``)."""

    def edits(src: Source, finding) -> list[Edit]:
        ref = _ref(src, finding, "autocast")
        torch = _torch_chain(src, ref, f"{device}.amp.autocast")
        call = _call_of(src, ref)
        if call.args:
            raise Refused("positional arguments mean other things to torch.autocast: pass them by keyword")
        return [
            Edit(src.start(ref), src.end(ref), f"{torch}.autocast"),
            _add_argument(src, call, f'"{device}"', first=True),
        ]

    return edits


@dataclass(frozen=True)
class Fix:
    """A rule's fix (the rule record's ``fix``)."""

    does: str  # what the fix writes, in words
    edits: Callable[[Source, object], list[Edit]]  # raises Refused
    caution: str | None = None  # why it is never applied without --unsafe-fixes, whatever the proofs say
    # How fix_proofs judges it: "run" (the linter-fixed broken program held to the case's own fix) or
    # "compile" (a fix to a file that does not parse: it must compile, the symptom go, and torch
    # accept the call's arguments; the case's check, which runs its own program, does not apply).
    proof: str = "run"


# --- applying them --------------------------------------------------------------------------
@dataclass
class Result:
    text: str  # the fixed text (the original where nothing was applied)
    fixed: list = field(default_factory=list)  # the findings whose fix was applied
    refused: list[tuple[object, str]] = field(default_factory=list)  # (finding, why not)

    @property
    def changed(self) -> bool:
        return bool(self.fixed)


def fix_text(text: str, findings, allowed: Callable[[str], str | None] = lambda rule: None) -> Result:
    """Apply the fixes of these findings to ``text``. ``allowed(rule)`` returns None to apply the
    rule's fix, or the reason not to (a fix that is not safe). Overlapping edits: the first wins,
    the others wait for the next run. Edits that would leave a file that does not parse: none."""
    from torch_pitfalls.lint.rules import FIXES  # the rules' modules import this one

    src, result, planned = Source(text), Result(text), []
    for finding in findings:
        fix = FIXES.get(finding.rule)
        if fix is None:
            continue
        why = allowed(finding.rule)
        if why:
            result.refused.append((finding, why))
            continue
        try:
            edits = fix.edits(src, finding)
        except Refused as exc:
            result.refused.append((finding, str(exc)))
            continue
        if not edits:
            result.refused.append((finding, "the fix found nothing to change"))
            continue
        taken = [(e.start, e.end) for _, es in planned for e in es]
        if any((e.start < end and start < e.end) or e.start == start for e in edits for start, end in taken):
            result.refused.append((finding, "overlaps another fix on this line: run --fix again"))
            continue
        planned.append((finding, edits))
    if not planned:
        return result
    new = text
    for edit in sorted((e for _, es in planned for e in es), key=lambda e: (e.start, e.end), reverse=True):
        new = new[: edit.start] + edit.text + new[edit.end :]
    try:
        ast.parse(new)
    except SyntaxError as exc:
        why = f"the fixed file would not parse ({exc.msg}, line {exc.lineno}): nothing fixed in it"
        result.refused += [(f, why) for f, _ in planned]
        return result
    result.text, result.fixed = new, [f for f, _ in planned]
    return result


PASSES = 10  # a fix can uncover another finding (or wait for an overlapping one): lint again, fix again


def fix_file_text(
    text: str, lint: Callable[[str], list], allowed: Callable[[str], str | None] = lambda rule: None
) -> Result:
    """Lint and fix until nothing more is fixed (at most PASSES times): every fixed finding, and
    why the findings that have a fix but were left as they are were not fixed (the last pass's)."""
    whole = Result(text)
    for _ in range(PASSES):
        step = fix_text(whole.text, lint(whole.text), allowed)
        whole.refused = step.refused
        if not step.changed:
            break
        whole.text, whole.fixed = step.text, whole.fixed + step.fixed
    return whole


# --- which fixes are safe -------------------------------------------------------------------
def load_proofs(reports_dir: str | Path) -> dict:
    """``reports/lint-fix-proofs.json`` (empty when there is none: every fix is then unsafe)."""
    path = Path(reports_dir) / PROOFS_FILE
    if not path.is_file():
        return {"releases": {}}
    return json.loads(path.read_text(encoding="utf-8"))


def safety(rule, proofs: dict, releases, rule_ranges: tuple[str, ...]) -> str | None:
    """None when the rule's fix is safe (see the module's docstring), else why not."""
    from torch_pitfalls.lint.rules import FIXES
    from torch_pitfalls.versions import affected

    fix = FIXES[rule.id]
    if fix.caution:
        return fix.caution
    problems, current = [], fix_sha256(rule.id)
    for version in releases:
        if not affected(rule_ranges, version):
            continue
        release = proofs.get("releases", {}).get(version, {})
        record = release.get("fixes", {}).get(rule.id)
        if record is None:
            problems.append(f"not observed on {version}")
        elif record.get("sha256") != current:  # a record of the whole-file hash (fixes_sha256) has none: stale
            problems.append(f"not observed on {version}: recorded from another text of the rule (make fix-versions)")
        elif not record["proven"]:
            problems.append(f"not proven on {version}: {record['why']}")
    if problems:
        return problems[0] + (
            f" (and {len(problems) - 1} more release{'s' if len(problems) > 2 else ''})" if len(problems) > 1 else ""
        )
    return None
