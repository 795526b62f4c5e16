"""What: A training loop that calls backward() and optimizer.step() but never clears the gradients.
Why: Gradients add up across steps: each step uses the sum of all the earlier ones.
Fix: call optimizer.zero_grad() each step.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops, _first_backward, _optimizer_step
from torch_pitfalls.lint.walking import kept_on, walk


def _clears_grads(node) -> bool:
    for n in walk(node):
        if _method(n, "zero_grad", "clear_grad"):
            return True
        if isinstance(n, ast.Assign) and any(getattr(t, "attr", None) == "grad" for t in n.targets):
            return True
        if _method(n, "zero_", "detach_") and getattr(n.func.value, "attr", None) in ("grad", "data"):
            return True
    return False


def _trains(loop, ctx) -> bool:
    calls = [n for n in walk(loop) if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)]
    return any(c.func.attr == "backward" for c in calls) and any(_optimizer_step(c, ctx) for c in calls)


def _named_not_called(stmt) -> bool:
    """``optimizer.zero_grad`` on a line of its own: the method named, never called (a statement that does
    nothing)."""
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Attribute) and stmt.value.attr == "zero_grad"


def _backward_without_zero_grad(node, ctx) -> bool:
    """Reported at the backward() of the innermost loop that trains without clearing gradients: the line
    above which zero_grad() belongs; or, where the loop names ``zero_grad`` without calling it, at that line."""
    if isinstance(node, ast.Expr):
        return _named_not_called(node) and any(
            _loop_without_zero_grad(loop, ctx) for loop in _enclosing_loops(node, ctx)
        )
    if not _method(node, "backward"):
        return False
    for loop in _enclosing_loops(node, ctx):
        if _trains(loop, ctx):
            if any(_named_not_called(n) for n in walk(loop)) and _loop_without_zero_grad(loop, ctx):
                return False  # reported at the zero_grad named there, not called
            if _first_backward(loop, node):
                return _loop_without_zero_grad(loop, ctx) or _stepped_never_cleared(loop, ctx)
            own = _own_part(loop, ctx)
            return _first_backward(own, node) and _stepped_never_cleared(own, ctx)
    if _step_function_looped(node, ctx):
        return True
    fn = ctx.function
    return (
        isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and _trains(fn, ctx)
        and _first_backward(fn, node)
        and _stepped_never_cleared(fn, ctx)
    )


def _own_part(loop, ctx) -> ast.Module:
    """The loop's statements less its inner loops that train (a GAN's critic loop inside its step loop):
    the generator's step, whose backward is not the loop's first."""
    kept = [s for s in loop.body if not (isinstance(s, (ast.For, ast.While, ast.AsyncFor)) and _trains(s, ctx))]
    return ast.Module(body=kept, type_ignores=[])


def _stepped_optimizers(scope, ctx) -> set[str]:
    """The optimizers ``scope`` steps, as written (``self.opt_g``; ``scaler.step(opt)``'s ``opt``)."""
    keys = set()
    for c in walk(scope):
        if isinstance(c, ast.Call) and _optimizer_step(c, ctx):
            keys.add(ast.unparse(c.args[0] if c.args else c.func.value))
    return keys


def _stepped_never_cleared(scope, ctx) -> bool:
    """An optimizer the scope steps is cleared nowhere in the file, where every clear of the file is another
    optimizer's ``zero_grad()``: a generator step that clears the discriminator's optimizer (copied from the
    discriminator step) and never its own, whose gradients then add up across steps. Any other clear (a
    module's ``zero_grad()``, ``p.grad = None``) may reach its parameters: not reported."""
    cleared = kept_on(ctx.module, "_ptf011_cleared", lambda module: [_optimizers_cleared(module, ctx)])[0]
    return cleared is not None and bool(cleared) and bool(_stepped_optimizers(scope, ctx) - cleared)


def _optimizers_cleared(module, ctx) -> frozenset | None:
    """The optimizers (as written) whose ``zero_grad()`` the file calls, or None where the file clears
    gradients some other way too (a module's ``zero_grad()``, a ``.grad`` write), which may reach any
    optimizer's parameters. Read once per file."""
    stepped = _stepped_optimizers(module, ctx)
    cleared = set()
    for n in walk(module):
        if _method(n, "zero_grad", "clear_grad"):
            key = ast.unparse(n.func.value)
            if key not in stepped and ctx.kind(n.func.value) != "optimizer":
                return None  # model.zero_grad(): which parameters it reaches is not read here
            cleared.add(key)
        elif isinstance(n, (ast.Assign, ast.Call)) and _clears_grads(n):
            return None
    return frozenset(cleared)


def _step_function_looped(node, ctx) -> bool:
    """The backward is in a step function of the file (``def training_step(self, batch)``: backward() and
    the optimizer's step(), no loop, no clearing, no call of a function that clears) that a loop of the file calls once per batch, and that
    loop clears nothing either (a ``zero_grad`` only in an epoch hook called outside it does not count)."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or not _trains(fn, ctx) or _clears_grads(fn):
        return False
    if _calls_a_clearing_function(fn, ctx):
        return False  # the step clears them through a hook of its own (``self.on_step_start()``)
    if next(_enclosing_loops(node, ctx), None) is not None or not _first_backward(fn, node):
        return False
    calls = []
    for n in walk(ctx.module):
        if not isinstance(n, ast.Call):
            continue
        by_self = isinstance(n.func, ast.Attribute) and getattr(n.func.value, "id", None) == "self"
        by_name = isinstance(n.func, ast.Name) and ctx.bindings.module_function(n.func.id) is fn
        if (by_self and ctx.klass is not None and fn in ctx.klass.body and n.func.attr == fn.name) or by_name:
            calls.append(n)
    looped = [loop for call in calls for loop in [next(_enclosing_loops(call, ctx), None)] if loop is not None]
    return (
        bool(looped)
        and len(looped) == len(calls)
        and not any(_clears_grads(loop) or _calls_a_clearing_function(loop, ctx) for loop in looped)
    )


def _fresh_optimizer(loop, ctx) -> bool:
    """The optimizer stepped in the loop is built in it: a new one (over new tensors) each pass."""
    for call in walk(loop):
        if isinstance(call, ast.Call) and _optimizer_step(call, ctx) and isinstance(call.func.value, ast.Name):
            ctor = ctx.value_of(call.func.value, call.lineno)
            if (
                isinstance(ctor, ast.Call)
                and (ctx.qualified(ctor.func) or "").startswith("torch.optim.")
                and loop.lineno <= ctor.lineno <= call.lineno
            ):
                return True
    return False


def _calls_a_clearing_function(loop, ctx) -> bool:
    """The loop calls a function of the file that clears the gradients (``reset_grad()`` running
    ``d_optimizer.zero_grad()``): by name, or a method of the class through ``self.``."""
    for call in walk(loop):
        if not isinstance(call, ast.Call):
            continue
        fn = None
        if isinstance(call.func, ast.Name):
            fn = ctx.bindings.module_function(call.func.id)
        elif isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) == "self" and ctx.klass:
            fn = _method_of(ctx.klass, call.func.attr, ctx)
        if fn is not None and _clears_grads(fn):
            return True
    return False


def _method_of(klass, name: str, ctx, depth: int = 0):
    """The method ``name`` of the class, or of the first of its bases of the file that defines it (pyvene's
    ``IntervenableModel`` calls ``self.set_zero_grad()``, defined on ``BaseModel``)."""
    found = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == name), None)
    if found is not None or depth > 4:
        return found
    classes = ctx.bindings.classes()
    for base in klass.bases:
        parent = classes.get(getattr(base, "id", None))
        if parent is not None and parent is not klass:
            found = _method_of(parent, name, ctx, depth + 1)
            if found is not None:
                return found
    return None


def _loop_without_zero_grad(node, ctx) -> bool:
    """The innermost loop that calls backward() and an optimizer's step() clears no gradients (an
    optimizer built afresh in each pass starts from tensors of that pass)."""
    if not isinstance(node, (ast.For, ast.While)) or not _trains(node, ctx) or _clears_grads(node):
        return False
    if _calls_a_clearing_function(node, ctx):
        return False
    if _fresh_optimizer(node, ctx):
        return False
    inner = [n for n in walk(node) if n is not node and isinstance(n, (ast.For, ast.While))]
    return not any(_trains(n, ctx) for n in inner)


RULE = Rule(
    "PTF011",
    ("missing-zero-grad",),
    "a training loop calls backward() and optimizer.step() but never zero_grad() (or names it without the call's "
    "parentheses): gradients add up across steps; "
    "call optimizer.zero_grad() each step",
    _backward_without_zero_grad,
    nodes=(ast.Call, ast.Expr),
    calls=("backward",),
)
