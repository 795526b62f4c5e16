"""What: a recurrent state carried into the next training step undetached: ``out, h = rnn(x, h)`` in a loop
that calls ``loss.backward()`` every step.
Why: the next backward() walks into the graph the previous one freed: "Trying to backward through the graph
a second time" (with retain_graph=True, backprop through the whole history, slower every step).
Fix: cut the state at each step: ``h = h.detach()`` (``tuple(s.detach() for s in h)`` for an LSTM's pair).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _grad_off, _own_code, _scopes_of, _values
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops
from torch_pitfalls.lint.walking import walk


def _names(target) -> set[str]:
    return {n.id for n in walk(target) if isinstance(n, ast.Name)}


def _detaches(fn) -> bool:
    """A function (or lambda) whose body cuts the graph: ``.detach()``, ``.detach_()``, ``.data``."""
    return any(_method(n, "detach", "detach_") or (isinstance(n, ast.Attribute) and n.attr == "data") for n in walk(fn))


def _passes_through(call, ctx) -> bool:
    """``carry(h)``: a function every value of which the module shows and none of which detaches (a
    helper that is not in this file, ``repackage_hidden(h)``, is taken to cut the graph)."""
    if not isinstance(call.func, ast.Name) or len(call.args) != 1 or call.keywords:
        return False
    values = _values(call.func.id, ctx.chain(), call.lineno, ctx.bindings)
    if not values:
        return False
    for value in values:
        if isinstance(value, ast.Name):  # a function of the module, by name
            value = ctx.bindings.module_function(value.id)
        if not isinstance(value, (ast.Lambda, ast.FunctionDef)) or _detaches(value):
            return False
    return True


def _carried(arg, state: set[str], ctx) -> bool:
    """The argument hands the step's own state on: ``h``, ``(h, c)``, or ``carry(h)`` that passes it through."""
    if isinstance(arg, ast.Name):
        return arg.id in state
    if isinstance(arg, ast.Tuple):
        return bool(arg.elts) and all(_carried(e, state, ctx) for e in arg.elts)
    if isinstance(arg, ast.Call) and arg.args and _carried(arg.args[0], state, ctx):
        return _passes_through(arg, ctx)
    return False


def _step_backward(loop) -> bool:
    """The loop body differentiates every step (``loss.backward()``, ``scaler.scale(loss).backward()``,
    ``accelerator.backward(loss)``), without keeping the graph (``retain_graph=True`` is a choice)."""
    calls = [n for n in walk(loop) if _method(n, "backward", "manual_backward")]
    return bool(calls) and not any(_const(_kw(c, "retain_graph"), True) for c in calls)


def _cut_in_loop(loop, statement, state: set[str]) -> bool:
    """The loop cuts or resets the state somewhere: ``h.detach_()``, ``h = h.detach()``,
    ``h = repackage_hidden(h)``, ``h = model.init_hidden(b)``: any other binding of a state name."""
    for n in walk(loop):
        if _method(n, "detach_", "detach") and _names(n.func.value) & state:  # h.detach_(), hidden[0].detach_()
            return True
        targets = n.targets if isinstance(n, ast.Assign) else [n.target] if isinstance(n, ast.AnnAssign) else []
        if n is not statement and any(_names(t) & state for t in targets):
            return True
    return False


def _model_detaches(call, ctx) -> bool:
    """The module is a class of this file whose forward detaches the state itself."""
    held = ctx.held(call.func)
    cls = ctx.bindings.classes().get((held.what or "") if held else "")
    forward = cls and next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    return bool(forward) and _detaches(forward)


def _self_attributes(node) -> set[str]:
    return {n.attr for n in walk(node) if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "self"}


def _state_kept_on_self(node, statement, ctx) -> bool:
    """``out, self.h = self.rnn(x, self.h)`` in a module class of the file: the state rides on the model from
    one call to the next. Reported where the file trains a model of the class in a loop that calls backward()
    every step, and neither the class cuts the state nor that loop resets it (``model.h = None``,
    ``model.reset_state()``: a method of the class that sets it)."""
    klass = ctx.klass
    passed = set().union(*(_self_attributes(a) for a in [*node.args[1:], *(k.value for k in node.keywords)]))
    state = _self_attributes(statement.targets[0]) & passed
    if not state or klass is None or ctx.kind(node.func) != "module" or not ctx.bindings.is_module_class(klass):
        return False
    if node.args and _self_attributes(node.args[0]) & state:
        return False
    setters = set()
    for method in (m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))):
        for n in walk(method):
            if (_method(n, "detach", "detach_") and _self_attributes(n.func.value) & state) or (
                isinstance(n, ast.Attribute) and n.attr == "data" and _self_attributes(n.value) & state
            ):
                return False  # the class cuts the state itself
            if isinstance(n, ast.Assign) and n is not statement and any(_self_attributes(t) & state for t in n.targets):
                if _self_attributes(n.value) & state:
                    return False  # the state made from itself (repackaged, detached): taken to cut it
                setters.add(method.name)  # a reset: None, zeros, init_hidden()
    return any(_trains_keeping(loop, klass, state, setters, ctx) for loop in _loops(ctx.module))


def _loops(tree):
    return [n for n in walk(tree) if isinstance(n, (ast.For, ast.AsyncFor, ast.While))]


def _trains_keeping(loop, klass, state: set[str], setters: set[str], ctx) -> bool:
    """The loop calls a model of ``klass`` and backward() every step, and does not reset its state there."""
    if not _step_backward(loop):
        return False
    models = set()
    for n in walk(loop):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name):
            held = ctx.bindings.held(n.func, _scopes_of(n, ctx), n.lineno)
            if held is not None and held.kind == "module" and held.what == klass.name:
                models.add(n.func.id)
    if not models:
        return False
    for n in walk(loop):
        if _method(n, *setters) and getattr(n.func.value, "id", None) in models:
            return False  # model.reset_state()
        targets = n.targets if isinstance(n, ast.Assign) else []
        if any(
            isinstance(t, ast.Attribute) and t.attr in state and getattr(t.value, "id", None) in models for t in targets
        ):
            return False  # model.hidden = model.init_hidden()
    return True


def _state_carried_across_backward(node, ctx):
    """``out, h = rnn(x, h)`` in a loop whose every step calls backward(), the state never detached or
    reset in the loop. Sure where the callee is known to be a module; UNSURE where its type is unknown.
    Also a state kept on the model itself (``_state_kept_on_self``)."""
    statement = ctx.parent(node)
    if not (isinstance(statement, ast.Assign) and statement.value is node and len(statement.targets) == 1):
        return False
    if _state_kept_on_self(node, statement, ctx):
        return True
    target = statement.targets[0]
    state = _names(target)
    # the state rides beside the input (``rnn(x, h)``, ``model(x, hidden=h)``): a call whose first
    # argument is what it returns (``batch = to_device(batch)``, ``best = max(best, acc)``) transforms a value
    arguments = [*node.args[1:], *(k.value for k in node.keywords)]
    carried = {n for a in arguments if _carried(a, state, ctx) for n in _names(a)} & state
    if not carried or (node.args and _names(node.args[0]) & state):
        return False
    loop = next(_enclosing_loops(node, ctx), None)
    if loop is None or not _own_code(node, ctx) or _grad_off(node, ctx):
        return False
    if not _step_backward(loop) or _cut_in_loop(loop, statement, carried) or _model_detaches(node, ctx):
        return False
    kind = ctx.kind(node.func)
    if kind == "module":
        return True
    # of unknown type: a step of a recurrence only where it returns the output beside the state
    return UNSURE if kind is None and isinstance(target, ast.Tuple) else False


RULE = Rule(
    "PTF218",
    ("tbptt-hidden-not-detached",),
    "the recurrent state is carried into the next step without detach(): the next backward() walks into "
    "the graph the previous one freed (an error, or backprop through all history with retain_graph); "
    "cut it at each step: h = h.detach() (tuple(s.detach() for s in h) for an LSTM)",
    _state_carried_across_backward,
    nodes=CALL,
    needs=("backward",),
)
