"""What: w.T (or w.t()) on a tensor that is 1-D by construction (torch.tensor([1., 2., 3.]),
torch.arange(n), torch.ones(n), a row of a matrix), combined elementwise with another tensor as if it
were a column: w.T * w, x.T - x.
Why: Transposing reverses the dimensions, and a 1-D tensor has one: w.T is w, so w.T * w is the
elementwise square, not the outer product; w.T warns once per process (deprecated), w.t() not at all.
Fix: make the column explicitly: w[:, None] (w.unsqueeze(1)), or torch.outer(w, v).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.tensors import _int_expr
from torch_pitfalls.lint.walking import walk

_FROM_DATA = ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor")
_VECTORS = ("torch.arange", "torch.linspace", "torch.logspace", "torch.randperm")
_BY_SIZE = ("torch.zeros", "torch.ones", "torch.empty", "torch.rand", "torch.randn")
_KEEP_METHODS = frozenset("to cuda cpu float double half clone detach contiguous requires_grad_ abs exp sqrt".split())
_ELEMENTWISE = (ast.Mult, ast.Add, ast.Sub, ast.Div, ast.Pow)


def _list_ndim(node) -> int | None:
    """The number of dimensions of a nested list of numbers written out (``[[1, 2], [3, 4]]``: 2)."""
    if not isinstance(node, (ast.List, ast.Tuple)) or not node.elts:
        return None
    inner = [_list_ndim(e) if isinstance(e, (ast.List, ast.Tuple)) else 0 for e in node.elts]
    if any(isinstance(e, (ast.List, ast.Tuple)) for e in node.elts):
        return inner[0] + 1 if len(set(inner)) == 1 and inner[0] is not None else None
    return 1 if all(_number(e) for e in node.elts) else None


def _number(node) -> bool:
    """``2.0`` or ``-1``."""
    if isinstance(node, ast.UnaryOp):
        node = node.operand
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _ndim(expr, ctx, line: int, depth: int = 0) -> int | None:
    """The number of dimensions of a tensor known by construction, else None."""
    if depth > 6:
        return None
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how != "assign":
            return None
        return _ndim(binding.value, ctx, binding.line, depth + 1)
    if isinstance(expr, ast.Subscript):
        return _indexed_ndim(expr, ctx, line, depth)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, _ELEMENTWISE):
        for tensor, other in ((expr.left, expr.right), (expr.right, expr.left)):
            if isinstance(other, ast.Constant) and type(other.value) in (int, float):
                return _ndim(tensor, ctx, line, depth + 1)
        return None
    if not isinstance(expr, ast.Call):
        return None
    q = ctx.qualified(expr.func)
    if q in _FROM_DATA and len(expr.args) == 1:
        return _list_ndim(expr.args[0])
    if q in _VECTORS and expr.args and not any(isinstance(a, ast.Starred) for a in expr.args):
        return 1
    if q in _BY_SIZE and expr.args and not any(isinstance(a, ast.Starred) for a in expr.args):
        if len(expr.args) == 1 and isinstance(expr.args[0], (ast.Tuple, ast.List)):
            sizes = expr.args[0].elts
        else:
            sizes = expr.args
        return len(sizes) if all(_int_expr(s) for s in sizes) else None
    if q is None and isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEP_METHODS:
        return _ndim(expr.func.value, ctx, line, depth + 1)
    return None


def _indexed_ndim(sub, ctx, line: int, depth: int) -> int | None:
    """``A[0]``, ``A[:, 0]``, ``A[1:3]`` of a tensor of known dimensions."""
    whole = _ndim(sub.value, ctx, line, depth + 1)
    if whole is None:
        return None
    index = sub.slice.elts if isinstance(sub.slice, ast.Tuple) else [sub.slice]
    if len(index) > whole:
        return None
    for i in index:
        if isinstance(i, ast.Slice):
            continue
        if isinstance(i, ast.Constant) and i.value is None:
            whole += 1
        elif _int_expr(i) or (isinstance(i, ast.Name) and _scalar_name(i, ctx, line)):
            whole -= 1
        else:
            return None
    return whole


def _scalar_name(name, ctx, line) -> bool:
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    return binding is not None and binding.how == "assign" and _int_expr(binding.value)


def _column_use(expr, ctx) -> bool:
    """``expr`` is combined elementwise (``*``, ``+``, ``-``, ``/``, a comparison) with a vector or a
    matrix known by construction, where a column would broadcast differently (into a table, or scaling
    rows instead of columns); directly or through a name it is assigned to. Against a tensor of unknown
    shape the no-op may change nothing: quiet."""
    parent = ctx.parent(expr)
    if isinstance(parent, ast.BinOp) and isinstance(parent.op, _ELEMENTWISE):
        other = parent.right if parent.left is expr else parent.left
        return _ndim(other, ctx, parent.lineno) in (1, 2)
    if isinstance(parent, ast.Compare) and len(parent.comparators) == 1:
        other = parent.comparators[0] if parent.left is expr else parent.left
        return _ndim(other, ctx, parent.lineno) in (1, 2)
    if (
        isinstance(parent, ast.Assign)
        and len(parent.targets) == 1
        and isinstance(parent.targets[0], ast.Name)
        and ctx.function is not None
    ):
        name = parent.targets[0].id
        for n in walk(ctx.function):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno > parent.lineno:
                binding, _ = ctx.bindings.lookup(name, ctx.chain(), n.lineno)
                if binding is not None and binding.value is expr and _column_use(n, ctx):
                    return True
    return False


def _transpose_of_vector(node, ctx) -> bool:
    """``w.T`` / ``w.t()`` where ``w`` is 1-D by construction, used elementwise against another tensor."""
    if isinstance(node, ast.Attribute):
        if node.attr != "T" or not isinstance(node.ctx, ast.Load):
            return False
        receiver, expr = node.value, node
    elif _method(node, "t") and not node.args and not node.keywords:
        receiver, expr = node.func.value, node
    else:
        return False
    if ctx.function is None or ctx.qualified(receiver) is not None:
        return False
    return _ndim(receiver, ctx, node.lineno) == 1 and _column_use(expr, ctx)


RULE = Rule(
    "PTF264",
    ("transpose-1d-noop",),
    "the transpose of a 1-D tensor is the same tensor: w.T * v is elementwise, not column times row "
    "(x.T warns once per process, x.t() never); make the column explicit with w[:, None] or use torch.outer",
    _transpose_of_vector,
    nodes=(ast.Attribute, ast.Call),
    needs=(".T", ".t("),
)
