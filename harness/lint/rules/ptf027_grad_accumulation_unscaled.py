"""What: Several backward() calls per optimizer step (gradient accumulation), each loss not divided by
their number.
Why: The gradients add up: the step uses k times the big batch's gradient.
Fix: divide each loss by k.
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _method
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops, _first_backward, _optimizer_step
from torch_pitfalls.lint.walking import kept_on, walk

_GRAD_RESCALE = re.compile(r"(^|_)(re)?scale_?grad(ient)?s?($|_)", re.I)


def _divided(expr) -> bool:
    """``x / k``, ``x * w``, ``x.div(k)`` at the top of the expression (a mean inside is not a scaling)."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):  # acc = acc + loss / k: a sum of scaled terms
        return _divided(expr.right) or _divided(expr.left)
    return (isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Div, ast.Mult))) or _method(expr, "div", "mul")


def _sum_of_scaled(expr, ctx, depth: int = 0) -> bool:
    """``_divided``, read through names and moves: ``loss = loss + reg.cuda()`` after ``loss = l1(p, y) / n`` and
    ``reg = lam * norm / n`` (every term of the sum was scaled where it was made)."""
    if _divided(expr):
        return True
    if depth > 6:
        return False
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        return _sum_of_scaled(expr.left, ctx, depth + 1) and _sum_of_scaled(expr.right, ctx, depth + 1)
    if _method(expr, "cuda", "to", "float", "double") and isinstance(expr.func, ast.Attribute):
        return _sum_of_scaled(expr.func.value, ctx, depth + 1)
    if isinstance(expr, ast.Name):  # its binding before this line
        value = ctx.value_of(expr, expr.lineno)
        return value is not None and value is not expr and _sum_of_scaled(value, ctx, depth + 1)
    return False


def _scaled(expr, loop, ctx) -> bool:
    """The loss is divided (``loss / k``, ``loss /= k``, ``loss = loss / k``) before its backward."""
    if _divided(expr):
        return True
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, getattr(expr, "lineno", 1 << 30))
        if value is not None and _sum_of_scaled(value, ctx):
            return True
        return any(
            isinstance(n, ast.AugAssign)
            and getattr(n.target, "id", None) == expr.id
            and isinstance(n.op, (ast.Div, ast.Mult))
            for n in walk(loop)
        )
    if isinstance(expr, ast.Call) and _called_name(expr) == "scale" and expr.args:  # scaler.scale(loss)
        return _scaled(expr.args[0], loop, ctx)
    return False


def _accumulation_unscaled(node, ctx) -> bool:
    """Gradient accumulation: backward() on each micro-batch's mean loss, and one optimizer step after
    several (after the loop, or under ``if i % k == 0``), with the loss never divided by their number:
    the step sees k times the gradient of the big batch."""
    if not isinstance(node, (ast.For, ast.While)) or any(
        isinstance(n, (ast.For, ast.While)) for n in walk(node) if n is not node
    ):
        return False
    backwards = [n for n in walk(node) if _method(n, "backward") and not n.args]
    if not backwards or all(_a_loss_made_before(b, node, ctx.function or ctx.module) for b in backwards):
        return False
    steps_in = [n for n in walk(node) if isinstance(n, ast.Call) and _optimizer_step(n, ctx)]
    if steps_in:
        every_k = [  # the steps under ``if i % k == 0``
            n
            for n in walk(node)
            if isinstance(n, ast.If)
            and any(isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mod) for m in walk(n.test))
        ]
        gated = {id(s) for n in every_k for s in walk(n)}
        counts = {
            ast.unparse(m.right)
            for n in every_k
            for m in walk(n.test)
            if isinstance(m, ast.BinOp) and isinstance(m.op, ast.Mod)
        }
        if counts & kept_on(ctx.module, "_ptf027_divisors", _divisors):
            return False  # the loss is divided by that count where it is computed (DPR's forward-pass helper)
        # a step that runs every pass (a GAN's discriminator beside a generator stepped every k passes)
        # uses the gradients of that pass: nothing accumulates
        if not steps_in or not all(id(s) in gated for s in steps_in):
            return False
        if all(_stepped_in_its_branch(b, every_k, steps_in) for b in backwards):
            return False  # backward and step under the same gate (airbench's "every fourth pass"): nothing accumulates
        if all(_scale_free(s, ctx) for s in steps_in):
            return False
    else:
        after = [
            n
            for n in walk(ctx.function)
            if isinstance(n, ast.Call)
            and _optimizer_step(n, ctx)
            and n.lineno > getattr(node, "end_lineno", node.lineno)
        ]
        before = [n for n in walk(ctx.function) if _method(n, "zero_grad") and n.lineno < node.lineno]
        if not (after and before):
            return False
    if any(
        (_method(n, "div_", "mul_") and getattr(_root_attr(n.func.value), "attr", None) == "grad")
        or (isinstance(n, ast.AugAssign) and getattr(_root_attr(n.target), "attr", None) == "grad")
        for n in walk(ctx.function)
    ):
        return False  # the gradients are divided instead (p.grad /= k)
    if any(isinstance(n, ast.Call) and _GRAD_RESCALE.search(_called_name(n)) for n in walk(ctx.function)):
        return False  # a helper rescales them before the step (torchtune's training.scale_grads(model, 1 / n))
    return not any(_scaled(b.func.value, node, ctx) for b in backwards)


def _a_loss_made_before(backward, loop, fn) -> bool:
    """The loop runs no forward: it back-propagates, one by one, the losses of one output made before it
    (``out = step(**batch)``, then ``for k in keys: scaler.scale(out[k]).backward()``; ``losses, state =
    model.training_step(obs)``, then ``for loss in losses: ...backward()``, a world model's, actor's and critic's
    losses each for its optimizer): several losses of one forward, whose gradients add up to the total loss's,
    not micro-batches of one batch. A list the code builds up (appending micro-batches' losses) is not one call's
    output: still read as accumulation."""
    loss = backward.func.value
    while isinstance(loss, ast.Call) and len(loss.args) == 1 and "scale" in _called_name(loss).lower():
        loss = loss.args[0]  # scaler.scale(loss), a helper _scale(loss)
    if isinstance(loop, ast.For) and isinstance(loss, ast.Name) and isinstance(loop.target, ast.Name):
        if loss.id == loop.target.id and isinstance(loop.iter, ast.Name):
            return _one_calls_output(loop.iter.id, loop, fn)
    if not (isinstance(loop, ast.For) and isinstance(loss, ast.Subscript) and isinstance(loss.value, ast.Name)):
        return False
    targets = {n.id for n in walk(loop.target) if isinstance(n, ast.Name)}
    if not any(isinstance(n, ast.Name) and n.id in targets for n in walk(loss.slice)):
        return False
    made = _bound_values(loss.value.id, fn, unpacked=False)
    return bool(made) and all(isinstance(v, ast.Call) and v.lineno < loop.lineno for v in made)


def _bound_values(name: str, fn, unpacked: bool) -> list:
    """What the function's assignments bind ``name`` to (``unpacked``: also as one of a tuple's targets)."""
    return [
        n.value
        for n in walk(fn)
        if isinstance(n, ast.Assign)
        and any(isinstance(x, ast.Name) and x.id == name for t in n.targets for x in (walk(t) if unpacked else (t,)))
    ]


def _one_calls_output(name: str, loop, fn) -> bool:
    """``name`` is bound, before the loop and only there, to (a part of) what one call returns, and nothing
    appends to it."""
    bound = _bound_values(name, fn, unpacked=True)
    grown = any(
        _method(n, "append", "extend", "insert") and getattr(n.func.value, "id", None) == name for n in walk(fn)
    )
    return bool(bound) and not grown and all(isinstance(v, ast.Call) and v.lineno < loop.lineno for v in bound)


def _stepped_in_its_branch(backward, gates, steps) -> bool:
    """The backward sits in a branch of one of the ``if i % k`` gates, and a step follows it in that
    same branch: each gated pass steps on its own gradient."""
    for gate in gates:
        for branch in (gate.body, gate.orelse):
            inside = {id(n) for stmt in branch for n in walk(stmt)}
            if id(backward) in inside and any(
                id(s) in inside and (s.lineno, s.col_offset) > (backward.lineno, backward.col_offset) for s in steps
            ):
                return True
    return False


# optimizers whose update divides the gradient by its own running magnitude: a constant factor k on every
# gradient cancels (up to eps); Adam's L2 weight_decay, added to the gradient, does not scale with it
_SCALE_FREE = tuple(f"torch.optim.{n}" for n in ("Adam", "AdamW", "Adamax", "NAdam", "RAdam", "RMSprop", "Adagrad"))
_DECOUPLED = ("torch.optim.AdamW",)


def _scale_free(step, ctx) -> bool:
    """``optimizer.step()`` of an optimizer known to be adaptive (Adam, RMSprop, ...), without L2 weight
    decay, in a function that clips no gradient norm: k times the gradient moves it the same."""
    held = ctx.held(step.func.value)
    if held is None or held.what not in _SCALE_FREE:
        return False
    if any(isinstance(n, ast.Call) and _called_name(n).startswith("clip_grad") for n in walk(ctx.function)):
        return False
    if held.what in _DECOUPLED:
        return True
    made = ctx.value_of(step.func.value, step.lineno) if isinstance(step.func.value, ast.Name) else None
    decay = next((k.value for k in getattr(made, "keywords", ()) if k.arg == "weight_decay"), None)
    return isinstance(made, ast.Call) and (decay is None or (isinstance(decay, ast.Constant) and not decay.value))


def _divisors(module) -> set[str]:
    """The text of every divisor of a loss in the file: ``loss = loss / k`` or ``loss /= k`` where the
    name is then backward()-ed or returned (a count such as ``len(loader) / k`` is no loss)."""
    out = set()
    for fn in walk(module):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        used = {getattr(n.func.value, "id", None) for n in walk(fn) if _method(n, "backward")}
        used |= {
            m.id
            for n in walk(fn)
            if isinstance(n, ast.Return) and n.value
            for m in walk(n.value)
            if isinstance(m, ast.Name)
        }
        for n in walk(fn):
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Div) and getattr(n.target, "id", None) in used:
                out.add(ast.unparse(n.value))
            elif (
                isinstance(n, ast.Assign)
                and len(n.targets) == 1
                and getattr(n.targets[0], "id", None) in used
                and isinstance(n.value, ast.BinOp)
                and isinstance(n.value.op, ast.Div)
            ):
                out.add(ast.unparse(n.value.right))
    return out


def _backward_unscaled(node, ctx) -> bool:
    """Reported at the micro-batch's backward(): the loss there is the one to divide."""
    if not (_method(node, "backward") and not node.args):
        return False
    loop = next(_enclosing_loops(node, ctx), None)
    return loop is not None and _first_backward(loop, node) and _accumulation_unscaled(loop, ctx)


def _root_attr(node):
    """``p.grad.data`` -> the ``.grad`` attribute node (what a ``.data`` hangs off)."""
    while isinstance(node, ast.Attribute) and node.attr == "data":
        node = node.value
    return node


RULE = Rule(
    "PTF027",
    ("grad-accumulation-unscaled",),
    "gradients are accumulated over several backward() calls per optimizer step, but each loss is not "
    "divided by their number: the step uses k times the big batch's gradient; divide the loss by k",
    _backward_unscaled,
    nodes=CALL,
    calls=("backward",),
)
