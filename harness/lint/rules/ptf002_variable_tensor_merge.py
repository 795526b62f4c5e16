"""What: torch.autograd.Variable relied on: volatile=, isinstance(x, Variable), a tensor wrapped again.
Why: Since 0.4 Variable(t) returns a plain Tensor: isinstance(x, Variable) is true of every tensor, and
volatile= is ignored, so the graph is recorded.
Fix: drop Variable: make the tensor with requires_grad=True, call t.requires_grad_(), or use
torch.no_grad().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _kw

_VARIABLE = ("torch.autograd.Variable", "torch.autograd.variable.Variable")


def _variable_relied_on(node, ctx) -> bool:
    """Code that relies on Variable being something other than a tensor: ``isinstance(x, Variable)``
    (true of every tensor), ``Variable(t, volatile=True)`` (ignored since 0.4: the graph is recorded),
    or a Variable wrapped again. ``Variable(t)`` alone returns the tensor and changes nothing."""
    if isinstance(node.func, ast.Name) and node.func.id == "isinstance" and len(node.args) == 2:
        kinds = node.args[1].elts if isinstance(node.args[1], ast.Tuple) else [node.args[1]]
        return any(ctx.qualified(k) in _VARIABLE for k in kinds)
    if not _is_call_to(node, ctx, *_VARIABLE):
        return False
    if _kw(node, "volatile") is not None:
        return True
    inner = ctx.resolve(node.args[0], node.lineno) if node.args else None
    return isinstance(inner, ast.Call) and _is_call_to(inner, ctx, *_VARIABLE)


RULE = Rule(
    "PTF002",
    ("variable-tensor-merge",),
    "Variable is a deprecated spelling since 0.4: Variable(t) returns a plain Tensor, so isinstance(x, "
    "Variable) is true of every tensor and volatile= is ignored (the graph is recorded); drop Variable: "
    "create the tensor with requires_grad=True, call t.requires_grad_(), or use torch.no_grad()",
    _variable_relied_on,
    nodes=CALL,
)
