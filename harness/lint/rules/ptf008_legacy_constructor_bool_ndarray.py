"""What: A legacy constructor (torch.FloatTensor(...), torch.LongTensor(...)) given one int or a bool
array.
Why: One int is read as a size (torch.FloatTensor(3) is 3 uninitialised floats, not [3.]), and bool
arrays were mishandled before 1.2.
Fix: torch.tensor(data, dtype=..., device=...) for data, torch.zeros(size) for a size.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _const, _is_call_to, _kw, _method, last_names
from torch_pitfalls.lint.rules.shared.tensors import _CONVERSIONS, _int_expr
from torch_pitfalls.lint.walking import walk

LEGACY_TYPES = tuple(
    f"torch.{t}"
    for t in (
        "FloatTensor",
        "DoubleTensor",
        "HalfTensor",
        "LongTensor",
        "IntTensor",
        "ShortTensor",
        "ByteTensor",
        "CharTensor",
        "BoolTensor",
    )
)


def _bool_data(node) -> bool:
    """Data that is boolean: True/False literals, comparisons, ``not x``, ``a and b`` of booleans,
    ``np.array(..., dtype=bool)``, ``x.astype(bool)``. ``x or [..]`` is one of its operands, not a bool,
    so a BoolOp is boolean only when each operand is."""
    if isinstance(node, ast.Constant):
        return type(node.value) is bool
    if isinstance(node, ast.Compare) or (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)):
        return True
    if isinstance(node, ast.BoolOp):
        return all(_bool_data(v) for v in node.values)
    if isinstance(node, (ast.List, ast.Tuple)):
        return any(_bool_data(e) for e in node.elts)
    if isinstance(node, (ast.ListComp, ast.GeneratorExp)):
        return _bool_data(node.elt)
    if isinstance(node, ast.Call):
        dtype = _kw(node, "dtype") or (node.args[0] if _method(node, "astype") and node.args else None)
        if dtype is not None and (
            getattr(dtype, "id", None) == "bool"
            or _const(dtype, "bool")
            or getattr(dtype, "attr", None) in ("bool", "bool_")
        ):
            return True
        return _called_name(node) in ("array", "asarray") and bool(node.args) and _bool_data(node.args[0])
    return False


_CUDA_TYPES = tuple(t.replace("torch.", "torch.cuda.", 1) for t in LEGACY_TYPES)


def _legacy_constructor_misread(node, ctx) -> bool:
    """``torch.FloatTensor(3)``: one int read as a size (uninitialised memory, not ``[3.]``), or bool data
    to a non-bool type (garbage before 0.4, a TypeError until 1.2). Several ints (``FloatTensor(2, 3)``)
    are a size on purpose, and float or int data converts the same way torch.tensor does: not flagged."""
    if not (_is_call_to(node, ctx, *LEGACY_TYPES, *_CUDA_TYPES) and len(node.args) == 1):
        return False
    data = ctx.resolve(node.args[0], node.lineno)
    if _int_expr(data):
        return not _filled_at_once(node, ctx)
    return ctx.qualified(node.func) not in ("torch.BoolTensor", "torch.cuda.BoolTensor") and _bool_data(data)


# the in-place methods that overwrite every element of a tensor
_FILLS = (
    "uniform_",
    "normal_",
    "random_",
    "fill_",
    "zero_",
    "bernoulli_",
    "exponential_",
    "geometric_",
    "cauchy_",
    "log_normal_",
    "copy_",
)


def _filled_at_once(node, ctx) -> bool:
    """``torch.FloatTensor(n).uniform_(-1, 1)`` (``torch.LongTensor(1).cuda().fill_(v)``): the int is
    a size on purpose and every element is written before anything reads it, so no uninitialised value
    is seen; or ``buf = torch.FloatTensor(n)`` whose next use fills it (``buf.fill_(0)``, ``buf[:] = x``)."""
    while True:
        up = ctx.parent(node)
        if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
            return _next_use_fills(up.targets[0].id, up, ctx)
        if not isinstance(up, ast.Attribute) or not _method(ctx.parent(up), *_FILLS, *_CONVERSIONS, "contiguous"):
            return False
        if up.attr in _FILLS:
            return True
        node = ctx.parent(up)  # a copy to another device or dtype: still uninitialised, look further


# torch.distributed's calls that write their tensor argument on the receiving ranks
_RECEIVES = ("broadcast", "recv", "irecv", "scatter", "all_gather", "all_gather_into_tensor", "broadcast_object_list")


def _next_use_fills(name: str, assign, ctx) -> bool:
    """The first use of ``name`` after ``assign`` in this function writes every element: a fill method
    (``name.zero_()``), or a whole-slice store (``name[:] = x``, ``name[...] = x``)."""
    uses = sorted(
        (n for n in walk(ctx.function) if isinstance(n, ast.Name) and n.id == name and n.lineno > assign.lineno),
        key=lambda n: (n.lineno, n.col_offset),
    )
    if not uses:
        return False
    up = ctx.parent(uses[0])
    if isinstance(up, ast.Attribute) and _method(ctx.parent(up), *_FILLS):
        return True
    if isinstance(up, ast.Call) and (ctx.qualified(up.func) or "").split(".")[-1] in _RECEIVES and uses[0] in up.args:
        return True  # a receive buffer: dist.broadcast(buf, 0) writes it on every rank that reads it
    if isinstance(up, ast.Subscript) and isinstance(up.ctx, ast.Store) and _loop_index(up.slice, up, ctx):
        return True  # buf[i] = ... for each i of a loop: a size buffer filled entry by entry (a collate's lengths)
    return (
        isinstance(up, ast.Subscript)
        and isinstance(up.ctx, ast.Store)
        and (
            isinstance(up.slice, ast.Slice)
            and up.slice.lower is None
            and up.slice.upper is None
            or _const(up.slice, Ellipsis)
        )
    )


def _loop_index(index, node, ctx) -> bool:
    """``index`` is the counter of a ``for`` around ``node`` over ``range(...)`` or ``enumerate(...)``."""
    if not isinstance(index, ast.Name):
        return False
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if (
            isinstance(up, ast.For)
            and isinstance(up.iter, ast.Call)
            and _called_name(up.iter) in ("range", "enumerate")
        ):
            target = up.target.elts[0] if isinstance(up.target, ast.Tuple) and up.target.elts else up.target
            if getattr(target, "id", None) == index.id:
                return True
        up = ctx.parent(up)
    return False


RULE = Rule(
    "PTF008",
    ("legacy-constructor-bool-ndarray",),
    "legacy constructors read one int as a size (torch.FloatTensor(3) is 3 uninitialised floats, not [3.]) "
    "and mishandled bool arrays before 1.2; use torch.tensor(data, dtype=..., device=...) or torch.zeros(size)",
    _legacy_constructor_misread,
    nodes=CALL,
    calls=last_names(*LEGACY_TYPES, *_CUDA_TYPES),
)
