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
