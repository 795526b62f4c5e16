"""What: A new tensor with requires_grad=True made from a number read out of the loss
(torch.tensor(loss.item(), requires_grad=True)), then differentiated.
Why: It is a new leaf with no graph: backward() reaches no parameter and nothing trains.
Fix: call backward() on the loss itself, and remove what detached it.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _const, _is_call_to, _kw, _method, last_names
from torch_pitfalls.lint.rules.shared.flow import _dead
from torch_pitfalls.lint.walking import walk

_TENSOR_FROM_DATA = ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.autograd.Variable")
# array methods whose result is computed from the array alone (still no graph behind it)
_NUMPY_KEEPS = ("ravel", "flatten", "reshape", "mean", "sum", "std", "astype", "squeeze", "clip")


def _detached_number(expr, ctx, line: int, depth: int = 0) -> bool:
    """A Python or NumPy number read out of a tensor: ``x.item()``, ``float(x)``, ``x.tolist()``,
    ``x.detach().cpu().numpy()``, arithmetic on one (``1 - float(dice)``), or NumPy computed from one
    (``np.corrcoef(p.ravel(), t.ravel())[0, 1]``); directly or through names."""
    if depth > 8:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return value is not None and _detached_number(value, ctx, line, depth + 1)
    if isinstance(expr, ast.UnaryOp):  # -total
        return _detached_number(expr.operand, ctx, line, depth + 1)
    if isinstance(expr, ast.BinOp):  # 1 - float(dice)
        return any(_detached_number(side, ctx, line, depth + 1) for side in (expr.left, expr.right))
    if _method(expr, "item", "tolist", "numpy"):
        return True
    if isinstance(expr, ast.Subscript):  # np.corrcoef(p, t)[0, 1]: an element of a NumPy result
        return _detached_number(expr.value, ctx, line, depth + 1)
    if _method(expr, *_NUMPY_KEEPS):  # p.ravel(), errors.mean(): still the detached values
        return _detached_number(expr.func.value, ctx, line, depth + 1)
    if isinstance(expr, ast.Call) and (ctx.qualified(expr.func) or "").startswith("numpy."):
        return any(_detached_number(a, ctx, line, depth + 1) for a in expr.args)  # np.corrcoef(p, t)
    if (  # sum(-lp.item() * g for lp, g in ...): a Python sum of numbers read out
        isinstance(expr, ast.Call)
        and getattr(expr.func, "id", None) in ("sum", "max", "min")
        and ctx.bindings.lookup(expr.func.id, ctx.chain(), line)[0] is None
        and expr.args
        and isinstance(expr.args[0], (ast.GeneratorExp, ast.ListComp))
    ):
        return _detached_number(expr.args[0].elt, ctx, line, depth + 1)
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "float"
        and len(expr.args) == 1
        and ctx.bindings.lookup("float", ctx.chain(), line)[0] is None
        and not isinstance(expr.args[0], ast.Constant)
    )


def _trained_on(call, ctx) -> bool:
    """The rewrapped tensor is differentiated (``.backward()`` on it, or on the name it is bound to) or
    named as a loss (``loss = torch.tensor(...)``)."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr == "backward":
        return True
    if isinstance(parent, ast.Return):  # a loss function that returns the new leaf
        name = getattr(ctx.function, "name", "")
        return "loss" in name.lower() or any(
            _method(n, "backward") and _called_name(n.func.value) == name for n in walk(ctx.module)
        )
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    if "loss" in name.lower():
        return True
    return any(_method(n, "backward") and getattr(n.func.value, "id", None) == name for n in walk(ctx.function))


def _loss_rewrapped(node, ctx) -> bool:
    """``loss = torch.tensor(loss.item(), requires_grad=True)``: a new leaf holding the loss's number,
    with no graph behind it. ``backward()`` runs without error and reaches no parameter: every
    gradient stays None and the optimizer never moves. Flagged where the new tensor is
    differentiated or named as a loss. The fix: call ``backward()`` on the loss itself (find what
    detached it instead: an ``.item()``, ``.numpy()``, ``torch.no_grad()``)."""
    if not _is_call_to(node, ctx, *_TENSOR_FROM_DATA) or not node.args:
        return False
    if not _const(_kw(node, "requires_grad"), True):
        return False
    if not _detached_number(node.args[0], ctx, node.lineno):
        return False
    return ctx.function is not None and _trained_on(node, ctx) and not _dead(node, ctx)


RULE = Rule(
    "PTF205",
    ("loss-rewrapped-from-item",),
    "torch.tensor(loss.item(), requires_grad=True) is a new leaf with no graph: backward() reaches no "
    "parameter and nothing trains; call backward() on the loss itself (and remove what detached it)",
    _loss_rewrapped,
    nodes=CALL,
    calls=last_names(*_TENSOR_FROM_DATA),
)
