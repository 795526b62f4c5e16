"""What: An import of torch._six.
Why: torch._six was removed in torch 2.0: ImportError.
Fix: use math.inf, str and collections.abc.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule

IMPORTS = (ast.Import, ast.ImportFrom)


RULE = Rule(
    "PTF102",
    ("torch-six-removed",),
    "torch._six was removed in torch 2.0; use math.inf, str and collections.abc",
    lambda n, c: (
        isinstance(n, (ast.Import, ast.ImportFrom))
        and any(
            (getattr(n, "module", None) or "").startswith("torch._six") or a.name.startswith("torch._six")
            for a in n.names
        )
    ),
    nodes=IMPORTS,
    upgrade=True,
    once_per_file=True,
    needs=("_six",),
)
