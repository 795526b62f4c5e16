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
Lightning hook), and everything where the project star-imports, holds a file that cannot be read, or is too
large to read here. The files are read as text (comments dropped), not parsed: a script that does not parse on
this Python still names what it calls.

The project is the file's folder, or the folder above it while that one holds Python files too (a script beside
a package of helpers), up to the first that declares the project (``requirements.txt``, packaging); its files
are read once per run.
"""

from __future__ import annotations

import ast
import functools
import os
import re
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
    texts = _texts(project) if project is not None else None
    if texts is None or not (_runs_as_script(tree) or _imported(here, texts)):
        return set()
    return {line for fn, inside in candidates if not _named(fn.name, project) for line in inside}


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


_STAR = re.compile(r"^\s*from\s+\S+\s+import\s+\*", re.M)
_IMPORT = re.compile(r"^\s*import\s+([^\n;]+)", re.M)  # ``import utils, torch, numpy as np``
_IMPORT_LINE = re.compile(r"^\s*(?:from\s+[\w.]+\s+)?import\s+[^\n]*", re.M)


@functools.lru_cache(maxsize=8)  # the files of a run come project by project
def _texts(project: Path) -> dict[Path, str] | None:
    """The project's files, without their comments; None where it star-imports (a star may name anything) or is
    too large to read here. Read as text, not parsed: a file that does not parse still names what it calls."""
    texts = {}
    for visited, (folder, subfolders, filenames) in enumerate(os.walk(project)):
        subfolders[:] = [s for s in subfolders if not s.startswith(".") and s not in _NOT_THE_PROJECT]
        for name in filenames:
            if name.endswith(".py"):
                try:
                    text = (Path(folder) / name).read_text(encoding="utf-8")
                except (OSError, UnicodeDecodeError):
                    return None  # a file not read may be the one that calls it
                if _STAR.search(text):
                    return None
                texts[(Path(folder) / name).resolve()] = re.sub(r"#[^\n]*", "", text)
        if len(texts) > _MAX_FILES or visited > _MAX_FILES:
            return None
    return texts


def _imported(module: Path, texts: dict[Path, str]) -> bool:
    """Another file of the project imports the module (``import gan``, ``from gan import GAN``, ``from . import
    gan``)."""
    word = re.compile(rf"\b{re.escape(module.stem)}\b")
    return any(
        path != module and any(word.search(m.group()) for m in _IMPORT_LINE.finditer(t)) for path, t in texts.items()
    )


def _named(name: str, project: Path) -> bool:
    """A file of the project names ``name`` other than where it is defined and other than as an attribute of
    another library's module (``torch.load`` does not call a project's ``load``): a call, a reference, an
    attribute of the project's objects, an import, a string."""
    for path, text in _texts(project).items():
        if name not in text:
            continue
        modules = _library_modules(project)[path]
        for m in re.finditer(rf"\b{re.escape(name)}\b", text):
            before = text[max(0, m.start() - 60) : m.start()]
            if re.search(r"\bdef\s+$", before):
                continue  # its own definition
            receiver = re.search(r"(\w+)(?:\.\w+)*\.$", before)
            if receiver and receiver.group(1) in modules:
                continue  # torch.load, np.random.seed: another library's
            return True
    return False


@functools.lru_cache(maxsize=8)  # asked for each candidate function of each file: read once per project
def _library_modules(project: Path) -> dict[Path, set[str]]:
    """Each file's names for other libraries' modules (``import utils, torch, numpy as np`` in a project that has a
    ``utils.py``: torch and np)."""
    texts = _texts(project)
    own = {p.stem for p in texts} | {p.parent.name for p in texts}
    out = {}
    for path, text in texts.items():
        modules = out[path] = set()
        for m in _IMPORT.finditer(text):
            for part in m.group(1).split(","):
                words = part.split()
                if words and words[0].split(".")[0] not in own:
                    modules.add(words[-1] if len(words) == 3 and words[1] == "as" else words[0].split(".")[0])
    return out
