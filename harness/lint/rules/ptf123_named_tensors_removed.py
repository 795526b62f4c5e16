"""What: Named tensors: names= to a torch factory, refine_names / align_to / rename_, a tensor's .names.
Why: Named tensors were removed in torch 2.13.
Fix: keep the dimension names beside the tensor.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _kw, _method, receiver_holds


def _names_of_tensor(node, ctx):
    """Named tensors: ``names=`` to a torch factory, ``.refine_names``/``.align_to``/``.rename_`` or
    reading ``.names`` on what the bindings prove a tensor (UNSURE on anything else: TensorDict and
    torchrl specs have their own ``names`` and ``refine_names``)."""
    if (
        isinstance(node, ast.Call)
        and (ctx.qualified(node.func) or "").startswith("torch.")
        and _kw(node, "names") is not None
    ):
        return True
    if _method(node, "refine_names", "align_to", "rename_"):
        return receiver_holds(node, ctx, "tensor")
    if not (
        isinstance(node, ast.Attribute)
        and node.attr == "names"
        and isinstance(node.ctx, ast.Load)
        and not ctx.guarded
        and ctx.qualified(node) is None
    ):
        return False
    return receiver_holds(node, ctx, "tensor")


RULE = Rule(
    "PTF123",
    ("named-tensors-removed",),
    "named tensors were removed in torch 2.13; keep dimension names beside the tensor",
    _names_of_tensor,
    nodes=(ast.Call, ast.Attribute),
    upgrade=True,
)
