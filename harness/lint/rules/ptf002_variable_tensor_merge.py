"""What: torch.autograd.Variable relied on: volatile=, or a tensor wrapped again.
Why: Since 0.4 Variable(t) returns a plain Tensor: volatile= is ignored, so the graph is recorded (not
reported under torch.no_grad(), which records nothing), and wrapping a tensor of a graph again cuts it off.
(isinstance(x, Variable) is true of every tensor: the branch it picks does what the other would; quiet.)
Fix: drop Variable: make the tensor with requires_grad=True, call t.requires_grad_(), or use
torch.no_grad().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _kw, last_names
from torch_pitfalls.lint.rules.shared.flow import _grad_off

_VARIABLE = ("torch.autograd.Variable", "torch.autograd.variable.Variable")


def _variable_relied_on(node, ctx) -> bool:
    """Code that relies on Variable being something other than a tensor: ``Variable(t, volatile=True)``
    (ignored since 0.4: the graph is recorded), or a Variable wrapped again (a new leaf, cut off from
    the graph). ``Variable(t)`` alone returns the tensor and changes nothing."""
    if not _is_call_to(node, ctx, *_VARIABLE):
        return False
    if _kw(node, "volatile") is not None:
        return not _grad_off(node, ctx)  # under no_grad nothing is recorded: volatile= asked for nothing more
    inner = ctx.resolve(node.args[0], node.lineno) if node.args else None
    return isinstance(inner, ast.Call) and _is_call_to(inner, ctx, *_VARIABLE)


RULE = Rule(
    "PTF002",
    ("variable-tensor-merge",),
    "Variable is a deprecated spelling since 0.4: Variable(t) returns a plain Tensor, so volatile= is "
    "ignored (the graph is recorded) and wrapping a tensor again cuts it off its graph; drop Variable: "
    "create the tensor with requires_grad=True, call t.requires_grad_(), or use torch.no_grad()",
    _variable_relied_on,
    nodes=CALL,
    calls=last_names(*_VARIABLE),
)
