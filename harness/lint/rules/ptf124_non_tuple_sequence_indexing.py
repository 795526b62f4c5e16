"""What: A tensor indexed with a list of slices (or None / Ellipsis) held in a name.
Why: It warns since torch 2.8: the list is still read as a tuple (observed through 2.15), and the
warning says it will be read as an index tensor.
Fix: index with tuple(...).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const
from torch_pitfalls.lint.rules.shared.tensors import known_not_tensor
from torch_pitfalls.lint.walking import walk


def _makes_list(node) -> bool:
    """An expression whose value is a list: a literal or comprehension, ``list(...)``, and ``+``/``*``
    of those. A ``+`` with a tuple in it (``(slice(None),) * n + (i,)``) makes a tuple (or fails)."""
    if isinstance(node, (ast.List, ast.ListComp)):
        return True
    if isinstance(node, ast.Call):
        return getattr(node.func, "id", None) == "list"
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mult)):
        sides = (node.left, node.right)
        if any(isinstance(s, (ast.Tuple, ast.GeneratorExp)) or _makes_tuple(s) for s in sides):
            return False
        return any(_makes_list(s) for s in sides)
    return False


def _makes_tuple(node) -> bool:
    return isinstance(node, ast.Tuple) or (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "tuple")


def _index_items(value):
    """What a list expression holds: a literal's elements, a comprehension's element."""
    for n in walk(value):
        if isinstance(n, ast.List):
            yield from n.elts
        elif isinstance(n, ast.ListComp):
            yield n.elt


def _list_of_slices_index(node, ctx) -> bool:
    if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Name):
        return False
    value = ctx.value_of(node.slice, node.lineno)
    if not (
        value is not None
        and _makes_list(value)
        and any(
            (isinstance(n, ast.Call) and getattr(n.func, "id", None) == "slice")
            or _const(n, None)
            or isinstance(n, ast.Constant)
            and n.value is Ellipsis
            for n in _index_items(value)
        )
    ):
        return False
    if known_not_tensor(node.value, ctx):  # NumPy has its own answer (an IndexError since 1.23)
        return False
    # a tensor by the bindings; an object of unknown type (an array from h5py, a sample dict's entry): --preview
    return True if ctx.kind(node.value) == "tensor" else UNSURE


RULE = Rule(
    "PTF124",
    ("non-tuple-sequence-indexing",),
    "indexing a tensor with a list of slices (or None/Ellipsis) warns since torch 2.8 (UserWarning, observed "
    "through 2.15, where it is still read as a tuple; the warning announces it will be read as an index "
    "tensor); index with tuple(...)",
    _list_of_slices_index,
    nodes=ast.Subscript,
    upgrade=True,
    deliberate_warning=True,
)
