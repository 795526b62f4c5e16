"""What: clip_grad_norm_ given model.parameters() kept in a name (or on self) that something else iterates
first.
Why: A generator is spent by its first reader (the optimizer): the clip then sees no parameter (a zero
norm from torch 2.8).
Fix: pass a list: list(model.parameters()).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _method
from torch_pitfalls.lint.walking import walk


def _generator_reused(node, ctx) -> bool:
    if not (
        _is_call_to(
            node,
            ctx,
            "torch.nn.utils.clip_grad_norm_",
            "torch.nn.utils.clip_grad_value_",
            "torch.nn.utils.clip_grad.clip_grad_norm_",
        )
        and node.args
    ):
        return False
    if isinstance(node.args[0], ast.Attribute):
        return _self_generator_reused(node.args[0], ctx)
    if not isinstance(node.args[0], ast.Name):
        return False
    value = ctx.value_of(node.args[0], node.lineno)
    if not _method(value, "parameters"):
        return False
    uses = [
        n
        for n in walk(ctx.function)
        if isinstance(n, ast.Name) and n.id == node.args[0].id and isinstance(n.ctx, ast.Load)
    ]
    return len(uses) > 1


def _self_generator_reused(target, ctx) -> bool:
    """``self.params = self.net.parameters()`` (set once in the class) read more than once in the class:
    a generator kept on the object is spent by its first reader (the optimizer built in ``__init__``),
    so a later ``clip_grad_norm_(self.params)`` in another method clips nothing."""
    fn = ctx.function
    if ctx.klass is None or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not fn.args.args:
        return False
    if getattr(target.value, "id", None) != fn.args.args[0].arg:
        return False
    sets = ctx.bindings.self_attributes(ctx.klass).get(target.attr, [])
    if len(sets) != 1 or not _method(sets[0][1], "parameters"):
        return False
    reads = 0
    for method in ctx.klass.body:
        if isinstance(method, (ast.FunctionDef, ast.AsyncFunctionDef)) and method.args.args:
            me = method.args.args[0].arg
            reads += sum(
                1
                for n in walk(method)
                if isinstance(n, ast.Attribute)
                and n.attr == target.attr
                and isinstance(n.ctx, ast.Load)
                and getattr(n.value, "id", None) == me
            )
    return reads > 1


RULE = Rule(
    "PTF116",
    ("clip-grad-norm-exhausted-generator",),
    "model.parameters() is a generator: once iterated (by an optimizer), clip_grad_norm_ sees nothing "
    "(a zero norm from torch 2.8); pass a list",
    _generator_reused,
    nodes=CALL,
    calls=("clip_grad_norm_", "clip_grad_value_"),
    upgrade=True,
)
