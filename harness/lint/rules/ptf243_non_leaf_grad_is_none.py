"""What: ``.grad`` read from a non-leaf tensor: a name bound to an operation on a tensor that requires grad
(``torch.randn(3, requires_grad=True) * 0.01``, ``.cuda()``/``.to(device)`` after ``requires_grad=True``,
``h = 2 * x``), with no ``retain_grad()``.
Why: backward() fills ``.grad`` only on leaves: the copy's ``.grad`` stays None and the update built on it
fails or reads nothing; the leaf that gets the gradient is the tensor left of the ``.cuda()``.
Fix: make the final tensor the leaf (create it on the device, then ``.requires_grad_()``), or ``retain_grad()``.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.rules.shared.flow import _grad_off
from torch_pitfalls.lint.rules.shared.leaves import _flag_set_between, _last_assign, _leaf_source
from torch_pitfalls.lint.walking import walk

# methods that hand back the tensor itself, or a tensor outside the graph: a leaf stays a leaf
_KEEP_LEAF = frozenset(
    "detach detach_ requires_grad_ retain_grad float cpu contiguous item tolist numpy size dim numel "
    "register_hook backward sum_to_size data_ptr is_contiguous type_as_string".split()
)
_SAME_DTYPE = ("torch.float32", "torch.float")


def _requires_grad(node, ctx, line: int, depth: int = 0) -> bool:
    """The expression holds a tensor that requires grad (a leaf made so, or a result computed from one)."""
    if depth > 6:
        return False
    if isinstance(node, ast.Name):
        found = _last_assign(node.id, ctx, line)
        if found is None:
            return False
        value, at, scope_node = found
        if _flag_set_between(node.id, scope_node, at, line):
            return True
        return _requires_grad(value, ctx, at, depth + 1)
    if _leaf_source(node, ctx):
        return True
    return _operation(node, ctx, line, depth) is not None


def _operation(node, ctx, line: int, depth: int):
    """The expression is an operation on a tensor that requires grad (its result is no leaf): the node
    itself, or None."""
    if depth > 6:
        return None
    if isinstance(node, ast.BinOp):
        operands = (node.left, node.right)
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        operands = (node.operand,)
    elif isinstance(node, ast.Subscript):
        operands = (node.value,)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and ctx.qualified(node.func) is None:
        attr = node.func.attr
        if attr in _KEEP_LEAF or _leaf_source(node, ctx):
            return None
        if attr == "to" and any(
            ctx.qualified(a) in _SAME_DTYPE for a in [*node.args, *(k.value for k in node.keywords)]
        ):
            return None  # .to(torch.float32) of a float32 tensor: the tensor itself
        if attr == "to" and not node.args and not node.keywords:
            return None
        operands = (node.func.value,)
    elif isinstance(node, ast.Call) and (ctx.qualified(node.func) or "").startswith("torch."):
        q = ctx.qualified(node.func)
        if q.rsplit(".", 1)[-1] in ("tensor", "as_tensor", "from_numpy", "no_grad", "device") or _leaf_source(
            node, ctx
        ):
            return None
        operands = tuple(node.args)
    else:
        return None
    return node if any(_requires_grad(o, ctx, line, depth + 1) for o in operands) else None


def _retains(name: str, scope_node) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "retain_grad"
        and getattr(n.func.value, "id", None) == name
        for n in walk(scope_node)
    )


def _non_leaf_grad(node, ctx) -> bool:
    if not (isinstance(node, ast.Attribute) and node.attr == "grad" and isinstance(node.ctx, ast.Load)):
        return False
    target = node.value
    if not isinstance(target, ast.Name) or ctx.module is None:
        return False
    found = _last_assign(target.id, ctx, node.lineno)
    if found is None:
        return False
    value, at, scope_node = found
    if _flag_set_between(target.id, scope_node, at, node.lineno) or _retains(target.id, scope_node):
        return False
    if _operation(value, ctx, at, 0) is None:
        return False
    return not _grad_off(value, ctx)  # made under no_grad: no graph, the result is a leaf


RULE = Rule(
    "PTF243",
    ("non-leaf-grad-is-none",),
    ".grad of a tensor computed from one that requires grad (x * c, .cuda(), .to(device)) is None: only "
    "leaf tensors get .grad; make the final tensor the leaf (create it on the device, then "
    ".requires_grad_()), or call .retain_grad() before backward",
    _non_leaf_grad,
    nodes=ast.Attribute,
    needs=("requires_grad", "Parameter"),
)
