"""Code nothing in its application calls: a finding there describes a harm that cannot occur, so it is
reported only with ``--preview``, labelled.

An application (a project no packaging metadata makes installable: no ``pyproject.toml``, ``setup.py``,
``setup.cfg``, ``*.dist-info`` or ``PKG-INFO`` at its root) runs what its scripts call; a library's
functions are its users' to call, so a library's code is always taken as reached. In an application a
function or method is unreached when its module is reached (it runs as a script, under
``if __name__ == "__main__":``, or another file of the project imports it) and no file of the project
names it: no call or reference by its name (``f(x)``, ``obj.m()``, ``callback=self.m``), no import of it,
no string equal to it (``getattr(obj, "m")``, a registry). Left alone, as reached: special methods, decorated
functions (a decorator may register them), ``test_*`` functions and test files (pytest calls them), methods
of a class with a base its file does not define (a framework may call them: ``Dataset.__getitem__``, a
Lightning hook), and everything where the project star-imports, holds a file that does not parse, or is too
large to read here.

The project is the file's folder, or the folder above it while that one holds Python files too (a script beside
a package of helpers), up to the first that declares the project (``requirements.txt``, packaging); its files
are read once per run.
"""

from __future__ import annotations

import ast
import functools
import os
from pathlib import Path

from torch_pitfalls.lint.testcode import is_test_file

PREVIEW_LABEL = "[preview: in code nothing in its application calls]"
_INSTALLABLE = ("pyproject.toml", "setup.py", "setup.cfg", "PKG-INFO")
_DECLARES = (*_INSTALLABLE, "requirements.txt", "environment.yml", "environment.yaml")
_MAX_FILES = 3000  # a project with more files or folders is not read (a home folder linted by mistake)
_NOT_THE_PROJECT = ("__pycache__", "node_modules", "site-packages", "venv")  # an installed library is not the project


def unreached(tree: ast.Module, path: str, lines) -> set[int]:
    """Those of ``lines`` (a file's findings) that lie in a function of the file at ``path`` that nothing in its
    application calls. The project is read only where a finding lies in a function that could be unreached."""
    if not os.path.isfile(path) or is_test_file(Path(path)):
        return set()
    candidates = [
        (fn, [line for line in lines if fn.lineno <= line <= (fn.end_lineno or fn.lineno)]) for fn in _candidates(tree)
    ]
    candidates = [(fn, inside) for fn, inside in candidates if inside]
    if not candidates:
        return set()
    here = Path(path).resolve()
    project = _project(here)
    names = _names(project) if project is not None else None
    if names is None or (here.stem not in names.modules_reached and not _runs_as_script(tree)):
        return set()
    return {line for fn, inside in candidates if fn.name not in names.referenced for line in inside}


def _candidates(tree: ast.Module):
    """The module's functions and the methods of its classes that nothing outside the project calls."""
    local_classes = {node.name for node in tree.body if isinstance(node, ast.ClassDef)}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and _candidate(node):
            yield node
        elif isinstance(node, ast.ClassDef) and not node.decorator_list and _own_bases(node, local_classes):
            yield from (
                m for m in node.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and _candidate(m)
            )


def _candidate(fn) -> bool:
    name = fn.name
    return not (fn.decorator_list or (name.startswith("__") and name.endswith("__")) or name.startswith("test"))


def _own_bases(klass: ast.ClassDef, local_classes: set) -> bool:
    """Every base is ``object`` or a class the file defines (no framework calls into it)."""
    return all(isinstance(b, ast.Name) and (b.id == "object" or b.id in local_classes) for b in klass.bases) and not (
        klass.keywords
    )


def _runs_as_script(tree: ast.Module) -> bool:
    return any(
        isinstance(node, ast.If)
        and isinstance(node.test, ast.Compare)
        and isinstance(node.test.left, ast.Name)
        and node.test.left.id == "__name__"
        for node in tree.body
    )


def _project(file: Path) -> Path | None:
    """The application's folder, or None for a library (installable): up from the file's folder while the
    folder above holds Python files too (a script beside a package of helpers), stopping at a folder that
    declares the project (requirements, packaging)."""
    folder = file.parent
    while not any((folder / name).exists() for name in _DECLARES):
        parent = folder.parent
        if parent == folder or not any(parent.glob("*.py")):
            break
        folder = parent
    if any((folder / name).exists() for name in _INSTALLABLE) or any(folder.glob("*.dist-info")):
        return None
    return folder


class _Names:
    def __init__(self, referenced: frozenset, modules_reached: frozenset):
        self.referenced, self.modules_reached = referenced, modules_reached


@functools.lru_cache(maxsize=8)  # the files of a run come project by project
def _names(project: Path) -> _Names | None:
    """What the project's files name, import and define; None where it star-imports or is too large."""
    files = []
    for visited, (folder, subfolders, filenames) in enumerate(os.walk(project)):
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in _NOT_THE_PROJECT]
        files += [Path(folder) / f for f in filenames if f.endswith(".py")]
        if len(files) > _MAX_FILES or visited > _MAX_FILES:
            return None
    own = {f.stem for f in files} | {f.parent.name for f in files}  # the project's own modules and packages
    referenced, modules = set(), set()
    for file in files:
        try:
            tree = ast.parse(file.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            return None  # a file not read may be the one that calls it
        if not _read_file(tree, own, referenced, modules):
            return None
    return _Names(frozenset(referenced), frozenset(modules))


def _read_file(tree: ast.Module, own: set, referenced: set, modules: set) -> bool:
    """Add what one file names and imports; False where it star-imports (it may name anything)."""
    imported = set()  # the names ``import torch`` binds: what hangs off another library's module is not the project's
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                modules.update(alias.name.split("."))
                if alias.name.split(".")[0] not in own:
                    imported.add(alias.asname or alias.name.split(".")[0])
        elif isinstance(node, ast.ImportFrom):
            if any(alias.name == "*" for alias in node.names):
                return False
            modules.update((node.module or "").split("."))
            modules.update(alias.name for alias in node.names)  # ``from . import train``: a module, or a name of one
            referenced.update(alias.name for alias in node.names)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            referenced.add(node.id)
        elif isinstance(node, ast.Attribute) and not _on_a_module(node, imported):
            referenced.add(node.attr)
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value.isidentifier():
            referenced.add(node.value)
    return True


def _on_a_module(node: ast.Attribute, imported: set) -> bool:
    """``torch.load``, ``np.random.seed``: an attribute of a module's chain (``import x``), not of the project's
    objects."""
    root = node.value
    while isinstance(root, ast.Attribute):
        root = root.value
    return isinstance(root, ast.Name) and root.id in imported
