"""What: typing's names read from torch: from torch import Optional, or torch.List in an annotation
evaluated when the def runs.
Why: torch no longer has them from torch 2.5: ImportError or AttributeError.
Fix: import them from typing.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _use_of
from torch_pitfalls.lint.walking import walk

# typing's names that torch/__init__.py imported plainly, and so exported, until 2.5
TYPING_NAMES = ("Any", "Callable", "Dict", "List", "Optional", "Set", "Tuple", "Union")


TORCH_TYPING = tuple(f"torch.{name}" for name in TYPING_NAMES)


def _annotated_with(fn, ctx, names) -> bool:
    """A parameter or return annotation of ``fn`` names one of ``names``: Python evaluates it when
    the ``def`` runs (unless the module defers annotations: ``from __future__ import annotations``)."""
    args = fn.args
    annotations = [
        a.annotation
        for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg)
        if a is not None
    ]
    named = any(
        isinstance(node, ast.Attribute) and _use_of(node, ctx, *names)
        for annotation in (*annotations, fn.returns)
        if annotation is not None
        for node in walk(annotation)
    )
    return named and not any(  # the module's imports are read only for a function that names one
        isinstance(s, ast.ImportFrom) and s.module == "__future__" and any(a.name == "annotations" for a in s.names)
        for s in ctx.module.body
    )


RULE = Rule(
    "PTF139",
    ("torch-typing-names-removed",),
    "typing's names (Any, Callable, Dict, List, Optional, Set, Tuple, Union) are no longer attributes "
    "of torch from torch 2.5 (ImportError / AttributeError); import them from typing",
    lambda n, c: (
        (isinstance(n, ast.ImportFrom) and n.module == "torch" and any(a.name in TYPING_NAMES for a in n.names))
        or (isinstance(n, ast.Attribute) and _use_of(n, c, *TORCH_TYPING))
        or (isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and _annotated_with(n, c, TORCH_TYPING))
    ),
    nodes=(ast.ImportFrom, ast.Attribute, ast.FunctionDef, ast.AsyncFunctionDef),
    upgrade=True,
    once_per_file=True,
)
