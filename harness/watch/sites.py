"""Where in the user's code something happened: the innermost frame that belongs neither to torch
nor to the watcher nor to Python's standard library (runpy, contextlib, functools, ...)."""

from __future__ import annotations

import os
import sys
import sysconfig
from pathlib import Path

_WATCH = str(Path(__file__).resolve().parent) + os.sep
_STDLIB = tuple({os.path.realpath(sysconfig.get_paths()[k]) + os.sep for k in ("stdlib", "platstdlib")})
_INSTALLED = ("site-packages", "dist-packages")  # below the standard library's folder, yet the user's libraries
_origins: dict[str, str] = {}


def _torch_dir() -> str | None:
    mod = sys.modules.get("torch")
    return os.path.realpath(os.path.dirname(mod.__file__)) + os.sep if getattr(mod, "__file__", None) else None


def origin(filename: str) -> str:
    """Whose code a frame's file is: "watch" (this package, and frozen or generated code:
    ``<frozen runpy>``, ``<string>``), "torch", "stdlib" (Python's own library, but not the
    packages installed below it), or "user" (anything else, the user's libraries included)."""
    known = _origins.get(filename)
    if known is None:
        full = os.path.realpath(filename)
        torch_dir = _torch_dir()
        if filename.startswith("<") or full.startswith(_WATCH):
            known = "watch"
        elif torch_dir and full.startswith(torch_dir):
            known = "torch"
        elif any(full.startswith(d) and not any(p in full[len(d) :] for p in _INSTALLED) for d in _STDLIB):
            known = "stdlib"
        else:
            known = "user"
        _origins[filename] = known
    return known


def is_foreign(filename: str) -> bool:
    """True for a frame that is not the user's: torch, the watcher, the standard library, and
    frozen or generated code."""
    return origin(filename) != "user"


def user_site(skip: int = 1) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost user frame, or None when every frame is foreign."""
    frame = sys._getframe(skip)
    while frame is not None:
        code = frame.f_code
        if not is_foreign(code.co_filename):
            return code.co_filename, frame.f_lineno, code.co_name
        frame = frame.f_back
    return None


def site_on_stack(filename: str, lineno: int, skip: int = 1) -> tuple[str, int, str]:
    """(file, line, function) for a line a warning names: its function from the frame that is
    at that line, if one is on the stack."""
    frame = sys._getframe(skip)
    while frame is not None:
        if frame.f_code.co_filename == filename and frame.f_lineno == lineno:
            return filename, lineno, frame.f_code.co_name
        frame = frame.f_back
    return filename, lineno, "<module>"


def user_site_of(tb) -> tuple[str, int, str] | None:
    """(file, line, function) of the innermost user frame of a traceback, or None."""
    site = None
    while tb is not None:
        code = tb.tb_frame.f_code
        if not is_foreign(code.co_filename):
            site = (code.co_filename, tb.tb_lineno, code.co_name)
        tb = tb.tb_next
    return site


def shown_path(filename: str) -> str:
    """A path as the user knows it: relative to the working directory when below it."""
    rel = os.path.relpath(filename) if os.path.isabs(filename) else filename
    return filename if rel.startswith("..") else rel
