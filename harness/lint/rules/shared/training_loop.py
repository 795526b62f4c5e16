"""The training loop as several rules read it: an optimizer's step, the loops around a call, a
loop's first backward()."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, _method
from torch_pitfalls.lint.rules.shared.modules import _module_method
from torch_pitfalls.lint.walking import kept_on, walk

_OPTIMIZER_NAME = ("optimizer", "optim", "opt", "optimiser")


def _optimizer_step(call, ctx) -> bool:
    """``optimizer.step()`` (not a scheduler's, a diffusion scheduler's or any other object's), or
    ``scaler.step(optimizer)``."""
    if not _method(call, "step"):
        return False
    receiver = call.func.value
    kind = ctx.kind(receiver)
    if kind == "optimizer":
        return True
    if kind is None and not call.args and _looks_like_optimizer(receiver):
        return True
    return len(call.args) == 1 and (ctx.kind(call.args[0]) == "optimizer" or _looks_like_optimizer(call.args[0]))


def _looks_like_optimizer(node) -> bool:
    name = getattr(node, "id", getattr(node, "attr", "")) or ""
    words = name.lower().split("_")
    return any(w in _OPTIMIZER_NAME for w in words) and not any("sched" in w or w == "lr" for w in words)


def _enclosing_loops(node, ctx):
    """The loops around ``node`` in its function, innermost first."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.For, ast.While)):
            yield up
        up = ctx.parent(up)


def _first_backward(loop, node) -> bool:
    """``node`` is the loop's first backward() call in source order (a loop's finding is reported once)."""
    calls = [n for n in walk(loop) if _method(n, "backward")]
    return bool(calls) and min(calls, key=lambda n: (n.lineno, n.col_offset)) is node


def _differentiated(ctx):
    """True where the code is trained through: an nn.Module's method (forward, a loss module), or a file
    that calls backward() / torch.autograd.grad / an optimizer's step; else UNSURE (a helper whose
    tensors may carry no graph)."""
    if _module_method(ctx):
        return True
    trains = kept_on(ctx.module, "_trains", lambda tree: [_trains(tree, ctx)])[0]
    return True if trains else UNSURE


def _trains(tree, ctx) -> bool:
    return any(
        isinstance(n, ast.Call)
        and (
            _method(n, "backward", "manual_backward")
            or ctx.qualified(n.func) in ("torch.autograd.grad", "torch.autograd.backward")
            or _optimizer_step(n, ctx)
        )
        for n in walk(tree)
    )
