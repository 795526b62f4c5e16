"""The package a linted file belongs to, read once: what rules ask of the package's other files (a
model class's ``_apply`` override elsewhere, a helper's name used in another file).

The package's folder: below the root declared.py finds (the folder holding pyproject.toml,
setup.cfg or the wheel's dist-info), the top-level folder the file is in where that is a package (or
``src``); otherwise, and without a declaration, the outermost folder of the ``__init__.py`` chain above
the file. A file that is in no package (directly in the root, or a script in a plain folder) is read
with the other files of its folder. The texts of the last few folders are kept (a file that cannot be
read as UTF-8 is left out).
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

from torch_pitfalls.lint.declared import DeclarationError, declared_for


def package_texts(path: Path) -> dict[Path, str]:
    """Every .py file of the package ``path`` (a file on disk) belongs to -> its text."""
    return texts_under(*package_folder(Path(path).resolve()))


def named_elsewhere(path: Path, name: str) -> bool:
    """``name`` is a word of another file of the package than ``path``."""
    return _named_elsewhere(Path(path).resolve(), name)


def defined_elsewhere(path: Path, name: str) -> bool:
    """Another file of the package than ``path`` defines a function or method ``name`` (``def name(``)."""
    return _defined_elsewhere(Path(path).resolve(), name)


@functools.lru_cache(maxsize=4096)
def _defined_elsewhere(here: Path, name: str) -> bool:
    definition = re.compile(rf"^\s*(?:async\s+)?def\s+{re.escape(name)}\s*\(", re.M)
    return any(p != here and name in text and definition.search(text) for p, text in package_texts(here).items())


@functools.lru_cache(maxsize=4096)  # asked of one helper by each copy it holds
def _named_elsewhere(here: Path, name: str) -> bool:
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(p != here and name in text and word.search(text) for p, text in package_texts(here).items())


def package_folder(path: Path) -> tuple[Path, bool]:
    """The folder to read and whether to read its subfolders."""
    try:
        declared = declared_for(path)
    except DeclarationError:  # the CLI reports it before linting; a library caller gets the package chain
        declared = None
    if declared is not None:
        parts = path.relative_to(declared.root).parts
        if len(parts) == 1:
            return declared.root, False
        top = declared.root / parts[0]
        if parts[0] == "src" or (top / "__init__.py").is_file():
            return top, True
        # a plain folder under the root (scripts, or a project nested in a bigger one): the package
        # chain above the file, as where nothing is declared
    folder = path.parent
    if not (folder / "__init__.py").is_file():
        return folder, False
    while (folder.parent / "__init__.py").is_file():
        folder = folder.parent
    return folder, True


@functools.lru_cache(maxsize=4)  # the packages of a run are linted one after the other
def texts_under(folder: Path, deep: bool) -> dict[Path, str]:
    texts = {}
    for path in _python_files(folder, deep):
        try:
            texts[path.resolve()] = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue
    return texts


def _python_files(folder: Path, deep: bool):
    if not deep:
        yield from (p for p in folder.glob("*.py") if p.is_file())
        return
    for here, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".") and d != "__pycache__"]
        yield from (Path(here, f) for f in files if f.endswith(".py"))
