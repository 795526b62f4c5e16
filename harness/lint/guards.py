"""Which code sits behind a feature or version guard: ``if hasattr(torch, "func")``, a version
comparison, ``except ImportError``. The portable spellings the cases' fixes use name the old API on
purpose, so the rules about removed or deprecated APIs stay quiet there."""
from __future__ import annotations

import ast

GUARD_CALLS = ("hasattr", "getattr")
GUARD_WORDS = ("__version__", "Version", "version", "parse_version")
GUARD_ERRORS = ("ImportError", "ModuleNotFoundError", "AttributeError")


def _is_guard_test(test: ast.AST) -> bool:
    for sub in ast.walk(test):
        if isinstance(sub, ast.Call) and getattr(sub.func, "id", None) in GUARD_CALLS:
            return True
        if isinstance(sub, (ast.Name, ast.Attribute)) and (getattr(sub, "id", None) in GUARD_WORDS
                                                          or getattr(sub, "attr", None) in GUARD_WORDS):
            return True
        if isinstance(sub, ast.Compare) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in sub.ops):
            return True
    return False


def _caught(handler: ast.ExceptHandler) -> tuple[str, ...]:
    names = [handler.type] if not isinstance(handler.type, ast.Tuple) else handler.type.elts
    return tuple(getattr(n, "id", getattr(n, "attr", None)) for n in names if n is not None)


def _handles_missing(handler: ast.ExceptHandler) -> bool:
    return any(name in GUARD_ERRORS for name in _caught(handler))
