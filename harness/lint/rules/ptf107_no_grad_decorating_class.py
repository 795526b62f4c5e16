"""What: A class decorated with torch.no_grad() (or enable_grad, inference_mode).
Why: Deprecated since torch 2.0; on some releases it turns the class into a function.
Fix: decorate its methods instead.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _is_call_to


def _no_grad_on_class(node, ctx) -> bool:
    return isinstance(node, ast.ClassDef) and any(
        _is_call_to(d, ctx, "torch.no_grad", "torch.enable_grad", "torch.inference_mode")
        or ctx.qualified(d) in ("torch.no_grad", "torch.enable_grad")
        for d in node.decorator_list
    )


RULE = Rule(
    "PTF107",
    ("no-grad-decorating-class",),
    "decorating a class with torch.no_grad() is deprecated since torch 2.0 (it turns the class into a "
    "function on some releases); decorate its methods",
    _no_grad_on_class,
    nodes=ast.ClassDef,
    upgrade=True,
    deliberate_warning=True,
)
