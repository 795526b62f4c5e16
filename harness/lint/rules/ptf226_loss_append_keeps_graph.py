"""What: the loss a training loop differentiates (``loss.backward()``, ``scaler.scale(loss).backward()``,
``accelerator.backward(loss)``) kept across iterations as a tensor: ``losses.append(loss)``,
``total_loss += loss``, ``running = running + loss * n``, ``history[k].append(loss)``.
Why: every kept tensor holds its step's autograd graph (and adding them chains the graphs): memory
grows at every step and is never given back until the list or the sum dies.
Fix: keep a number: ``loss.item()`` (or ``float(loss)``); ``loss.detach()`` to stay on the device.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _function_values, _grad_off, _own_code
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops
from torch_pitfalls.lint.walking import walk

_REDUCTIONS = ("mean", "sum")  # (loss / k).mean().backward(): still the loss's graph
_CONTAINERS = ("list", "dict", "defaultdict", "OrderedDict", "collections.defaultdict", "collections.OrderedDict")
_TENSOR_ZEROS = ("torch.tensor", "torch.zeros", "torch.as_tensor", "torch.scalar_tensor")


# --- what a backward() differentiates -----------------------------------------------------------
def _differentiated(call, ctx) -> list:
    """The expressions a backward call may differentiate: ``x.backward()`` -> x,
    ``scaler.scale(x).backward()`` -> x, ``self.manual_backward(x)`` / ``torch.autograd.backward(x)`` -> x;
    ``accelerator.backward(x)`` -> x (and its receiver, which no loop keeps: a tensor's
    ``backward(gradient)`` and a runner's ``backward(loss)`` read alike)."""
    if not isinstance(call, ast.Call):
        return []
    if ctx.qualified(call.func) == "torch.autograd.backward":
        return call.args[:1]
    if not _method(call, "backward", "manual_backward"):
        return []
    receiver = call.func.value
    if call.func.attr == "manual_backward":
        return call.args[:1]
    if _method(receiver, "scale") and len(receiver.args) == 1:  # scaler.scale(loss).backward()
        return [receiver.args[0]]
    if isinstance(receiver, ast.Name) and call.args and ctx.kind(receiver) != "tensor":
        return [receiver, call.args[0]]
    return [receiver]


def _names_differentiated(expr) -> set[str]:
    """The names whose graph a backward of ``expr`` walks: ``loss``, ``loss / accum``, ``(a + b).mean()``."""
    if isinstance(expr, ast.Name):
        return {expr.id}
    if isinstance(expr, ast.BinOp):
        return _names_differentiated(expr.left) | _names_differentiated(expr.right)
    if isinstance(expr, ast.UnaryOp):
        return _names_differentiated(expr.operand)
    if _method(expr, *_REDUCTIONS) and not expr.args:
        return _names_differentiated(expr.func.value)
    return set()


def _backward_calls(scope, ctx) -> list[tuple[ast.Call, ast.AST]]:
    """(call, what it differentiates) for every backward call in ``scope`` that runs."""
    out = []
    for n in walk(scope):
        if isinstance(n, ast.Call):
            found = _differentiated(n, ctx)
            if found and _own_code(n, ctx) and not _dead(n, ctx):
                out.extend((n, what) for what in found)
    return out


# --- what a statement keeps ---------------------------------------------------------------------
def _binding(name: str, line: int, ctx):
    return ctx.bindings.lookup(name, ctx.chain(), line)[0]


def _carries(expr, losses: dict[str, object], line: int, ctx, depth: int = 0) -> bool:
    """``expr`` holds a differentiated loss itself (the same binding the backward call used) or
    arithmetic on it, not a number read out of it (``.item()``, ``float()``, ``.detach()``, ``.data``)."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Name):
        return expr.id in losses and _binding(expr.id, line, ctx) is losses[expr.id]
    if isinstance(expr, ast.BinOp):
        return _carries(expr.left, losses, line, ctx, depth + 1) or _carries(expr.right, losses, line, ctx, depth + 1)
    if isinstance(expr, ast.UnaryOp):
        return _carries(expr.operand, losses, line, ctx, depth + 1)
    if isinstance(expr, (ast.Tuple, ast.List)):  # losses.append((step, loss))
        return any(_carries(e, losses, line, ctx, depth + 1) for e in expr.elts)
    if isinstance(expr, ast.Dict):  # history.append({"loss": loss})
        return any(_carries(v, losses, line, ctx, depth + 1) for v in expr.values)
    if isinstance(expr, ast.Call) and len(expr.args) == 1 and not expr.keywords and _identity(expr.func, ctx):
        return _carries(expr.args[0], losses, line, ctx, depth + 1)  # keep(loss), keep = lambda v: v
    return False


def _identity(func, ctx) -> bool:
    """A function of the module that hands its argument back unchanged (``keep = lambda v: v``, or a
    parameter every call of the module passes such a function for)."""
    if not isinstance(func, ast.Name):
        return False
    values = _function_values(func.id, ctx.chain(), func.lineno, ctx)
    return bool(values) and all(_returns_its_argument(v) for v in values)


def _returns_its_argument(fn) -> bool:
    if isinstance(fn, ast.Lambda):
        return bool(fn.args.args) and isinstance(fn.body, ast.Name) and fn.body.id == fn.args.args[0].arg
    if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) and fn.args.args:
        body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
        return (
            len(body) == 1
            and isinstance(body[0], ast.Return)
            and isinstance(body[0].value, ast.Name)
            and body[0].value.id == fn.args.args[0].arg
        )
    return False


# --- where the kept value lives -----------------------------------------------------------------


def _root(target):
    """The name or ``self.`` attribute a container or total is stored under (``history[k]`` -> history)."""
    while isinstance(target, ast.Subscript):
        target = target.value
    if isinstance(target, ast.Name):
        return target
    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) and target.value.id == "self":
        return target
    return None


def _same(a, b) -> bool:
    if isinstance(a, ast.Name) and isinstance(b, ast.Name):
        return a.id == b.id
    if isinstance(a, ast.Attribute) and isinstance(b, ast.Attribute):
        return a.attr == b.attr and getattr(a.value, "id", None) == getattr(b.value, "id", None) == "self"
    return False


def _mentions(expr, root) -> bool:
    return any(_same(n, root) for n in walk(expr) if isinstance(n, (ast.Name, ast.Attribute)))


def _rebinds(loop, root, keep) -> bool:
    """The loop binds the container or total afresh somewhere (``losses = []``, ``acc = 0`` after the
    accumulated backward): it is reset every iteration, not kept across them. ``acc = acc + loss``,
    the keeping statement itself, is not a reset."""
    for n in walk(loop):
        if n is keep:
            continue
        if isinstance(n, (ast.Assign, ast.AnnAssign)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if any(_same(t, root) for target in targets for t in walk(target)):
                if not (n.value is not None and _mentions(n.value, root) and isinstance(n.value, ast.BinOp)):
                    return True
        elif isinstance(n, (ast.For, ast.AsyncFor)) and any(_same(t, root) for t in walk(n.target)):
            return True
        elif _method(n, "clear", "zero_") and _same(n.func.value, root):
            return True
    return False


def _initial(root, loop, ctx):
    """What the container or total held before the loop: its binding above the loop in the function, or
    for a ``self.`` attribute what the class assigns it (one value)."""
    if isinstance(root, ast.Name):
        binding, where = ctx.bindings.lookup(root.id, ctx.chain(), loop.lineno)
        if binding is None or binding.how != "assign" or where[0] is not ctx.chain()[0]:
            return None
        return binding.value
    if ctx.klass is None:
        return None
    assigned = ctx.bindings.self_attributes(ctx.klass).get(root.attr) or []
    values = [v for _, v, line in assigned if not (loop.lineno <= line <= loop.end_lineno)]
    return values[0] if len(values) == 1 else None


def _is_container(value, ctx) -> bool:
    if isinstance(value, (ast.List, ast.Dict)):
        return True
    if isinstance(value, ast.Call):
        name = ctx.qualified(value.func) or getattr(value.func, "id", None)
        return name in _CONTAINERS
    return False


def _is_zero(value, ctx) -> bool:
    """``0``, ``0.0``, ``torch.tensor(0.)``, ``torch.zeros(())``, ``[]``: a total that starts empty."""
    if isinstance(value, ast.Constant):
        return type(value.value) in (int, float) and value.value == 0
    if isinstance(value, ast.List):
        return not value.elts
    return isinstance(value, ast.Call) and ctx.qualified(value.func) in _TENSOR_ZEROS


def _differentiated_later(root, ctx) -> bool:
    """The container or total is what gets differentiated (``acc.backward()``,
    ``torch.stack(losses).mean().backward()``, ``total = sum(losses); total.backward()``)."""
    for call, what in _backward_calls(ctx.function, ctx):
        if _mentions(what, root):
            return True
        for name in _names_differentiated(what):
            value = ctx.value_of(ast.Name(id=name, ctx=ast.Load()), call.lineno)
            if value is not None and _mentions(value, root):
                return True
    return False


def _kept(node):
    """(where it is kept, what is kept, how) for ``c.append(x)``, ``t += x`` and ``t = t + x``."""
    if _method(node, "append") and len(node.args) == 1 and not node.keywords:
        return node.func.value, node.args[0], "append"
    if isinstance(node, ast.AugAssign) and isinstance(node.op, (ast.Add, ast.Sub)):
        return node.target, node.value, "total"
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.value, ast.BinOp)
        and isinstance(node.value.op, (ast.Add, ast.Sub))
    ):
        target, value = node.targets[0], node.value
        for own, other in ((value.left, value.right), (value.right, value.left)):
            if _same(own, target):
                return target, other, "total"
    return None


def _loss_kept_across_steps(node, ctx) -> bool:
    """A statement in a training loop that keeps the loss the loop differentiates, as a tensor, in a
    list or total that outlives the iteration."""
    kept = _kept(node)
    if ctx.function is None:
        return False
    if kept is None:
        return isinstance(node, ast.Call) and _handed_to_a_keeper(node, ctx)
    where, value, how = kept
    root = _root(where)
    if root is None or not _own_code(node, ctx) or _grad_off(node, ctx) or _dead(node, ctx):
        return False
    for loop in _enclosing_loops(node, ctx):
        losses = _losses(loop, ctx)
        if not losses:
            continue
        if any(getattr(b, "how", None) == "iter" and b.line == loop.lineno for b in losses.values()):
            continue  # ``for aux_loss in aux_list``: the loop goes over one step's losses, not over steps
        if not _carries(value, losses, node.lineno, ctx):
            return False
        return _outlives(loop, node, root, how, ctx)
    return _kept_by_a_step_method(node, value, root, how, ctx)


def _losses(scope, ctx) -> dict:
    """The names whose graph a backward call in ``scope`` walks -> the binding it used."""
    losses = {}
    for call, what in _backward_calls(scope, ctx):
        for name in _names_differentiated(what):
            binding = _binding(name, call.lineno, ctx)
            if binding is not None:
                losses.setdefault(name, binding)
    return losses


def _outlives(scope, node, root, how: str, ctx) -> bool:
    """The container or total ``node`` keeps into is not reset in ``scope`` nor itself differentiated, and it
    started empty outside it: it outlives each pass."""
    if _rebinds(scope, root, node) or _differentiated_later(root, ctx):
        return False
    initial = _initial(root, scope, ctx)
    if initial is None:
        return False
    return _is_container(initial, ctx) if how == "append" else _is_zero(initial, ctx)


def _kept_by_a_step_method(node, value, root, how: str, ctx) -> bool:
    """A method that runs one training step (a backward and an optimizer's ``step()``), called once per batch
    by a loop elsewhere, keeping the loss in an attribute of its object (``self.history["train"].append(loss)``),
    which outlives the call: every step's graph stays, as in a loop."""
    fn = ctx.function
    if not (isinstance(root, ast.Attribute) and ctx.klass is not None and isinstance(fn, ast.FunctionDef)):
        return False
    losses = _losses(fn, ctx)
    steps = any(_method(n, "step") and not n.args and _own_code(n, ctx) for n in walk(fn))
    if not (losses and steps and _carries(value, losses, node.lineno, ctx)):
        return False
    return _outlives(fn, node, root, how, ctx)


def _handed_to_a_keeper(call, ctx) -> bool:
    """``history.log(loss=loss)`` in a training loop: the loss handed to a method of a class of this file (or to
    a function of it) that keeps what it is given in its object (``self.rows[key].append(value)``,
    ``self.total += value``): each step's graph stays with the object, as with a list in the loop."""
    if not (call.args or call.keywords):
        return False
    fn = _callee(call, ctx)  # first: most calls are not of the module's own functions
    if fn is None or not _own_code(call, ctx) or _grad_off(call, ctx) or _dead(call, ctx):
        return False
    for loop in _enclosing_loops(call, ctx):
        losses = _losses(loop, ctx)
        if not losses:
            continue
        handed = [a for a in call.args if _carries(a, losses, call.lineno, ctx)]
        handed_by_name = [k.arg for k in call.keywords if k.arg and _carries(k.value, losses, call.lineno, ctx)]
        if not (handed or handed_by_name):
            return False
        params = [a.arg for a in (*fn.args.posonlyargs, *fn.args.args)][1 if _is_method(fn, ctx) else 0 :]
        names = {params[call.args.index(a)] for a in handed if call.args.index(a) < len(params)}
        known = {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}
        names |= {k for k in handed_by_name if k in known}
        if fn.args.kwarg is not None and any(k not in known for k in handed_by_name):
            names |= _values_of(fn, fn.args.kwarg.arg)
        return bool(names) and _keeps_on_self(fn, names)
    return False


def _callee(call, ctx):
    """The function of this module a call runs: ``f(...)``, or ``obj.m(...)`` on ``obj = Cls(...)`` of a class
    of this module (``self.m(...)`` inside it)."""
    func = call.func
    if isinstance(func, ast.Name):
        return ctx.bindings.module_function(func.id)
    if not isinstance(func, ast.Attribute) or not isinstance(func.value, ast.Name):
        return None
    if func.value.id == "self":
        klass = ctx.klass
    else:
        made = ctx.value_of(func.value, call.lineno)
        name = made.func.id if isinstance(made, ast.Call) and isinstance(made.func, ast.Name) else None
        klass = ctx.bindings.classes().get(name) if name else None
    if klass is None:
        return None
    return next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == func.attr), None)


def _is_method(fn, ctx) -> bool:
    return any(fn in klass.body for klass in ctx.bindings.classes().values())


def _values_of(fn, kwargs: str) -> set[str]:
    """The names ``for key, value in kwargs.items()`` / ``for value in kwargs.values()`` bind to its values."""
    out = set()
    for loop in walk(fn):
        if not (isinstance(loop, ast.For) and _method(loop.iter, "items", "values")):
            continue
        if not (isinstance(loop.iter.func.value, ast.Name) and loop.iter.func.value.id == kwargs):
            continue
        target = loop.target
        if loop.iter.func.attr == "items" and isinstance(target, ast.Tuple) and len(target.elts) == 2:
            target = target.elts[1]
        if isinstance(target, ast.Name):
            out.add(target.id)
    return out


def _keeps_on_self(fn, names: set[str]) -> bool:
    """A statement of ``fn`` keeps one of ``names`` as it is in a container or total of its object."""
    for node in walk(fn):
        kept = _kept(node)
        if kept is None:
            continue
        where, value, _how = kept
        root = _root(where)
        if isinstance(value, ast.Name) and value.id in names and isinstance(root, ast.Attribute):
            return True
    return False


RULE = Rule(
    "PTF226",
    ("loss-append-keeps-graph",),
    "the differentiated loss is kept across iterations as a tensor (appended or summed): each one holds its "
    "step's autograd graph, so memory grows every step; keep a number: loss.item() (or loss.detach())",
    _loss_kept_across_steps,
    nodes=(ast.Call, ast.AugAssign, ast.Assign),
    harm="memory",
    needs=("backward",),
)
