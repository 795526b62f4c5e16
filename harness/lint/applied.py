"""The tensor attributes a package moves itself: an ``nn.Module._apply`` override that reassigns an
attribute from the function it is handed (``m.stride = fn(m.stride)``) makes ``.to()``, ``.cuda()``,
``.half()`` convert that tensor too, as they do a buffer (``_apply`` is what they all call).

A plain tensor attribute of that name is moved by the package's own model class, even when the
override is in another file (a detection model's ``_apply`` moving its head's ``stride``), so PTF015's
"not moved by .to()" does not hold for it. The package is read once: the files under its folder
that contain ``def _apply`` are parsed, the rest only read, and the result is kept per folder.

The package's folder: below the root declared.py finds (the folder holding pyproject.toml,
setup.cfg or the wheel's dist-info), the top-level folder the file is in; without a declaration,
the outermost folder of the ``__init__.py`` chain above the file. A file that is in no package
(directly in the root, or a script in a plain folder) is read with the other files of its folder.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from torch_pitfalls.lint.declared import DeclarationError, declared_for
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
    """The names moved by any ``_apply`` override in the package ``path`` (a file on disk) belongs to."""
    folder, deep = _package_folder(Path(path).resolve())
    return _moved_under(folder, deep)


def _package_folder(path: Path) -> tuple[Path, bool]:
    """The folder to read and whether to read its subfolders."""
    try:
        declared = declared_for(path)
    except DeclarationError:  # the CLI reports it before linting; a library caller gets the package chain
        declared = None
    if declared is not None:
        parts = path.relative_to(declared.root).parts
        return (declared.root / parts[0], True) if len(parts) > 1 else (declared.root, False)
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return folder, False
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder, True


@functools.lru_cache(maxsize=None)
def _moved_under(folder: Path, deep: bool) -> frozenset[str]:
    names: set[str] = set()
    for path in _python_files(folder, deep):
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
        if _MARK not in text:
            continue
        try:
            names |= moved_in_tree(ast.parse(text, filename=str(path)))
        except SyntaxError:
            continue
    return frozenset(names)


def _python_files(folder: Path, deep: bool):
    if not deep:
        yield from (p for p in folder.glob("*.py") if p.is_file())
        return
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        yield from (Path(here, f) for f in files if f.endswith(".py"))
