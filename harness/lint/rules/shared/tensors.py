"""Tensors as several rules read them: the names of factories and conversions, and an expression
that is an int."""

from __future__ import annotations

import ast

_RAW_DATA = ("tensor", "as_tensor", "from_numpy", "rand", "randn", "zeros", "ones", "full", "softmax", "sigmoid")


def _int_expr(node) -> bool:
    """An expression that is an int: ``3``, ``n * 2`` of int literals, ``len(x)``, ``int(x)``."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp):
        return _int_expr(node.operand)
    if isinstance(node, ast.BinOp) and not isinstance(node.op, ast.Div):
        return _int_expr(node.left) and _int_expr(node.right)
    return isinstance(node, ast.Call) and getattr(node.func, "id", None) in ("len", "int")


_CONVERSIONS = ("to", "cuda", "cpu", "double", "float", "half", "long", "int", "bfloat16", "bool", "type")


def known_not_tensor(node, ctx) -> bool:
    """``node`` holds a NumPy array, not a tensor: the bindings say so, or it sits where an
    ``isinstance(node, np.ndarray)`` test (without torch.Tensor beside it) has just held."""
    if ctx.kind(node) == "ndarray":
        return True
    if not isinstance(node, ast.Name):
        return False
    child, parent = node, ctx.parent(node)
    while parent is not None and not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(parent, ast.If) and child in parent.body and _isinstance_of_ndarray(parent.test, node.id, ctx):
            return True
        child, parent = parent, ctx.parent(parent)
    return False


def _isinstance_of_ndarray(test, name: str, ctx) -> bool:
    if not (
        isinstance(test, ast.Call)
        and getattr(test.func, "id", None) == "isinstance"
        and len(test.args) == 2
        and getattr(test.args[0], "id", None) == name
    ):
        return False
    kinds = test.args[1].elts if isinstance(test.args[1], ast.Tuple) else [test.args[1]]
    names = {ctx.qualified(k) or "" for k in kinds}
    return "numpy.ndarray" in names and not any(n.startswith("torch.") for n in names)
