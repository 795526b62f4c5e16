"""The tensor attributes a package moves itself: an ``nn.Module._apply`` override that reassigns an
attribute from the function it is handed (``m.stride = fn(m.stride)``) makes ``.to()``, ``.cuda()``,
``.half()`` convert that tensor too, as they do a buffer (``_apply`` is what they all call).

A plain tensor attribute of that name is moved by the package's own model class, even when the
override is in another file (a detection model's ``_apply`` moving its head's ``stride``), so PTF015's
"not moved by .to()" does not hold for it. The package is read once: the files under its folder
that contain ``def _apply`` are parsed, the rest only read, and the result is kept per folder.

Which files are the package's: package.py.
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

from torch_pitfalls.lint.package import package_folder, texts_under
from torch_pitfalls.lint.walking import walk

_MARK = "def _apply"


def moved_in_tree(tree: ast.AST) -> frozenset[str]:
    """The attribute names an ``_apply(self, fn)`` override in this module assigns a result of ``fn``."""
    names = set()
    for node in _statements(tree):
        if not (
            isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.name == "_apply"
            and len(node.args.args) >= 2
        ):
            continue
        fn = node.args.args[1].arg
        loops = {}  # ``for name in ("mean", "std"): setattr(self, name, fn(...))``
        for stmt in walk(node):
            if (
                isinstance(stmt, ast.For)
                and isinstance(stmt.target, ast.Name)
                and isinstance(stmt.iter, (ast.Tuple, ast.List, ast.Set))
            ):
                loops[stmt.target.id] = [e.value for e in stmt.iter.elts if isinstance(e, ast.Constant)]
        for stmt in walk(node):
            if isinstance(stmt, ast.Assign) and _calls(stmt.value, fn):
                names.update(t.attr for t in stmt.targets if isinstance(t, ast.Attribute))
            elif (
                isinstance(stmt, ast.Call)
                and getattr(stmt.func, "id", None) == "setattr"
                and len(stmt.args) == 3
                and _calls(stmt.args[2], fn)
            ):
                name = stmt.args[1]
                if isinstance(name, ast.Constant):
                    names.add(name.value)
                elif isinstance(name, ast.Name):
                    names.update(loops.get(name.id, ()))
    return frozenset(n for n in names if isinstance(n, str))


def _statements(tree: ast.AST):
    """Every statement, found through statement bodies alone (a method is never inside an expression):
    much less than ``ast.walk`` over a whole module."""
    todo = [tree]
    while todo:
        node = todo.pop()
        yield node
        for name in ("body", "orelse", "finalbody", "handlers", "cases"):
            children = getattr(node, name, None)
            if isinstance(children, list):
                todo.extend(c for c in children if isinstance(c, (ast.stmt, ast.excepthandler, ast.match_case)))


def _calls(expr: ast.AST, fn: str) -> bool:
    """The value is what ``fn`` returns (``fn(t)``, or ``fn(t) if t is not None else None``)."""
    return any(isinstance(c, ast.Call) and isinstance(c.func, ast.Name) and c.func.id == fn for c in walk(expr))


def moved_by_package(path: Path) -> frozenset[str]:
    """The names moved by any ``_apply`` override in the package ``path`` (a file on disk) belongs to
    (package.py: which files, read once)."""
    return _moved_under(*package_folder(Path(path).resolve()))


@functools.lru_cache(maxsize=None)
def _moved_under(folder: Path, deep: bool) -> frozenset[str]:
    names: set[str] = set()
    for path, text in texts_under(folder, deep).items():
        if _MARK not in text:
            continue
        try:
            names |= moved_in_tree(ast.parse(text, filename=str(path)))
        except SyntaxError:
            continue
    return frozenset(names)
