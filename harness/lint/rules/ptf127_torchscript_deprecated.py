"""What: torch.jit.script / trace / trace_module, called or used as a decorator.
Why: Deprecated since torch 2.10 (DeprecationWarning; FutureWarning from 2.14).
Fix: use torch.compile or torch.export.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _is_call_to

RULE = Rule(
    "PTF127",
    ("torchscript-deprecated",),
    "torch.jit.script (and trace) are deprecated since torch 2.10 (DeprecationWarning; FutureWarning from 2.14); use "
    "torch.compile or torch.export",
    lambda n, c: (
        _is_call_to(n, c, "torch.jit.script", "torch.jit.trace", "torch.jit.trace_module")
        or (
            isinstance(n, (ast.FunctionDef, ast.ClassDef))
            and any(c.qualified(d) == "torch.jit.script" for d in n.decorator_list)
        )
    ),
    nodes=(ast.Call, ast.FunctionDef, ast.ClassDef),
    calls=("script", "trace", "trace_module"),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
)
