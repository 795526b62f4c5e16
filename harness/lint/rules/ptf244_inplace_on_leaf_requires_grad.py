"""What: an in-place update (``-=``, ``.sub_()``, ``.zero_()``, ``.copy_()``, ``w[i] = v``) of a leaf tensor that
requires grad (``requires_grad=True``, an ``nn.Parameter``, a module's parameter) with gradients on, not
through ``.data``: e.g. a hand-written SGD step ``w -= lr * w.grad``.
Why: autograd refuses it: ``RuntimeError: a leaf Variable that requires grad is being used in an in-place
operation``.
Fix: update under ``with torch.no_grad():`` (the same tensor, changed outside the graph), or use an optimizer.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _method
from torch_pitfalls.lint.rules.shared.flow import _decorated_grad_off, _grad_off
from torch_pitfalls.lint.rules.shared.leaves import _flag_set_between, _last_assign, _leaf_source
from torch_pitfalls.lint.walking import walk

_IN_PLACE = frozenset(
    """add_ sub_ mul_ div_ zero_ copy_ fill_ clamp_ clamp_min_ clamp_max_ clip_ normal_ uniform_ addcmul_ addcdiv_
masked_fill_ masked_scatter_ index_add_ index_copy_ index_fill_ scatter_ scatter_add_ exp_ neg_ abs_ pow_ sqrt_
lerp_ random_ bernoulli_ fill_diagonal_ renorm_ mul_ div_ sign_ floor_ round_ set_ resize_ squeeze_ unsqueeze_
t_ transpose_ log_ sigmoid_ tanh_ relu_ exponential_ geometric_ cauchy_ log_normal_ put_ index_put_""".split()
)
_GRAD_OFF_CALLS = (
    "torch.set_grad_enabled",
    "torch.autograd.set_grad_enabled",
    "torch.autograd.grad_mode.set_grad_enabled",
)


def _false(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is False


def _written(node):
    """The tensor an in-place statement or call writes into: (expression, the node to report)."""
    if isinstance(node, ast.AugAssign):
        target = node.target
        return (target.value if isinstance(target, ast.Subscript) else target), node
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Subscript):
        return node.targets[0].value, node
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in _IN_PLACE
        and isinstance(written := node.func.value, (ast.Name, ast.Attribute, ast.Subscript))
    ):
        receiver = written.value if isinstance(written, ast.Subscript) else written
        return receiver, node
    return None, None


def _grad_on_sure(node, ctx):
    """Whether gradients are on where ``node`` runs: False inside ``with torch.no_grad()`` (or
    ``inference_mode``, ``set_grad_enabled(False)``) or a function decorated so (any enclosing one), or
    where the module turns them off for good; True otherwise."""
    if _grad_off(node, ctx):
        return False
    up = ctx.parent(node)
    while up is not None:
        if isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)) and _decorated_grad_off(up, ctx):
            return False
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(
            isinstance(i.context_expr, ast.Call)
            and ctx.qualified(i.context_expr.func) in _GRAD_OFF_CALLS
            and i.context_expr.args
            and not (isinstance(i.context_expr.args[0], ast.Constant) and i.context_expr.args[0].value is True)
            for i in up.items
        ):
            return False
        up = ctx.parent(up)
    if ctx.module is not None and any(
        isinstance(n, ast.Call) and ctx.qualified(n.func) in _GRAD_OFF_CALLS for n in walk(ctx.module)
    ):
        return False  # torch.set_grad_enabled(False) somewhere: the grad mode is not the file's default
    return True


def _callers_grad_on(ctx):
    """The function runs with gradients on as far as the module shows: True for the module's own code or a
    module-level function every call of which (in this module) has gradients on; False where one is
    under no_grad; UNSURE for a method or a function the module never calls."""
    fn = ctx.function
    if fn is None or isinstance(fn, ast.Module):
        return True
    if ctx.klass is not None:
        return _method_callers_grad_on(fn, ctx)
    if ctx.bindings.module_function(getattr(fn, "name", "")) is not fn:
        return UNSURE
    sites = ctx.bindings.call_sites(fn.name)
    if not sites:
        return UNSURE
    return all(_grad_on_sure(call, ctx) for call, _, _ in sites) or False


def _method_callers_grad_on(fn, ctx):
    """A method runs with gradients on where every call of a method of its name in the module does
    (``cb.on_step_end(self)`` from a trainer's step, the callback object of unknown class): True, False where
    one is under no_grad, UNSURE where the module never calls it (a hook a framework calls)."""
    if fn.name.startswith("__"):
        return UNSURE
    calls = [
        n
        for n in walk(ctx.module)
        if isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == fn.name
        and not (fn.lineno <= n.lineno <= fn.end_lineno)
    ]
    if not calls:
        return UNSURE
    return all(_grad_on_sure(call, ctx) for call in calls) or False


def _turned_off(name: str, scope_node) -> bool:
    """``name.requires_grad = False`` / ``name.requires_grad_(False)`` (or a model's) in the scope."""
    for n in walk(scope_node):
        if (
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets)
            and _false(n.value)
        ):
            return True
        if (
            isinstance(n, ast.Call)
            and getattr(n.func, "attr", None) == "requires_grad_"
            and n.args
            and _false(n.args[0])
        ):
            return True
    return False


def _leaf(receiver, ctx, line: int):
    """The written tensor is a leaf that requires grad: "local" (made so in this scope: a factory with
    requires_grad=True, an nn.Parameter), "parameter" (a module's parameter), or None."""
    if isinstance(receiver, ast.Name):
        found = _last_assign(receiver.id, ctx, line)
        if found is not None:
            value, at, scope_node = found
            if _leaf_source(value, ctx):
                return "local"
            if _flag_set_between(receiver.id, scope_node, at, line):
                return "local"
            return None
        held = ctx.held(receiver, line)
        binding, _ = ctx.bindings.lookup(receiver.id, ctx.chain(), line)
        if binding is None or binding.how != "iter":
            return None
        if held is not None and held.what == "parameter":
            return "parameter"  # for p in model.parameters()
        if _method(binding.value, "parameters") and not binding.value.args:
            return "parameter"  # for p in trainer.critic.parameters(): a module's, whatever holds it
        return None
    if isinstance(receiver, ast.Attribute) and getattr(receiver.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(receiver.attr) or []
        if len(assigned) == 1 and _leaf_source(assigned[0][1], ctx) and ctx.qualified(assigned[0][1].func):
            return "local" if assigned[0][0] is ctx.function else "parameter"
        return None
    if (
        isinstance(receiver, ast.Attribute)
        and receiver.attr in ("weight", "bias")
        and isinstance(receiver.value, ast.Name)
    ):
        held = ctx.held(receiver.value, line)
        if held is not None and held.kind == "module" and (held.what or "").startswith("torch.nn."):
            return "parameter"
    return None


def _in_place_on_leaf(node, ctx):
    receiver, where = _written(node)
    if receiver is None or ctx.module is None:
        return False
    line = where.lineno
    kind = _leaf(receiver, ctx, line)
    if kind is None:
        return False
    if not _grad_on_sure(where, ctx):
        return False
    scope = ctx.function if ctx.function is not None else ctx.module
    name = getattr(receiver, "id", None)
    if _turned_off(name or "", scope):
        return False
    if kind == "local" and not isinstance(receiver, ast.Name):
        return True  # self.w = nn.Parameter(...) and written in the same method
    if kind == "local":
        found = _last_assign(receiver.id, ctx, line)
        if found is not None and found[2] is scope:
            return True  # made and changed in the same function: the grad mode is this function's
    callers = _callers_grad_on(ctx)
    return callers


RULE = Rule(
    "PTF244",
    ("inplace-on-leaf-requires-grad",),
    "an in-place update of a leaf tensor that requires grad (w -= lr * w.grad, p.add_(...)) raises "
    "'a leaf Variable that requires grad is being used in an in-place operation'; update it under "
    "torch.no_grad() (or through an optimizer)",
    _in_place_on_leaf,
    nodes=(ast.AugAssign, ast.Assign, ast.Call),
    needs=("requires_grad", "Parameter", "parameters", ".weight", ".bias"),
)
