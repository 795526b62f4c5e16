"""Command-line options as rules read them: what ``args.x`` holds when the script runs with its
defaults, from the file's own ``parser.add_argument("--x", default=...)``."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import _kw, _method
from torch_pitfalls.lint.walking import walk


def _dest(call) -> str | None:
    """The attribute an ``add_argument`` call fills: ``dest=``, else its first long flag (``--num-workers``
    -> ``num_workers``), else a positional name."""
    dest = _kw(call, "dest")
    if isinstance(dest, ast.Constant) and isinstance(dest.value, str):
        return dest.value
    flags = [a.value for a in call.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    long = [f for f in flags if f.startswith("--")]
    if long:
        return long[0][2:].replace("-", "_")
    return flags[0] if flags and not flags[0].startswith("-") else None


def option_default(expr, ctx):
    """The default of the option ``expr`` reads (``args.workers`` where ``args = parser.parse_args()``):
    the ``default=`` expression of the one ``add_argument`` that fills it, a ``None`` constant where it
    gives none; None where it cannot be told (not an option, declared twice, no declaration here)."""
    if not (isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name)):
        return None
    parsed = ctx.value_of(expr.value, expr.lineno)
    if isinstance(parsed, ast.Subscript):  # args = parser.parse_known_args()[0]
        parsed = parsed.value
    if not _method(parsed, "parse_args", "parse_known_args"):
        return None
    found = [n for n in walk(ctx.module) if _method(n, "add_argument") and _dest(n) == expr.attr]
    if len(found) != 1:
        return None
    default = _kw(found[0], "default")
    return default if default is not None else ast.Constant(None)
