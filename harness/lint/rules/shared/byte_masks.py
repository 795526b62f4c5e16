"""What a uint8 (byte) mask is, as the rules that refuse one read it (PTF255 masked_fill, PTF131 attention
masks): made with ``.byte()``, ``.to(torch.uint8)``, ``dtype=torch.uint8`` or ``torch.ByteTensor``, or a
dtype-keeping op of one, through names, a parameter's call sites, a function of the file that returns one and
``self.`` buffers registered in the class."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.walking import walk

_BYTE_TYPES = ("torch.ByteTensor", "torch.cuda.ByteTensor")
# tensor methods and torch functions whose result keeps the dtype of the tensor they are given
_KEEP_DTYPE = frozenset(
    """triu tril triu_ tril_ unsqueeze squeeze view reshape expand expand_as repeat transpose permute contiguous
    clone detach to cuda cpu flip t narrow masked_fill masked_fill_ fill_ zero_ flatten roll repeat_interleave""".split()
)
_KEEP_DTYPE_FUNCTIONS = ("triu", "tril", "unsqueeze", "squeeze", "reshape", "transpose", "permute", "flip", "roll")


def _is_uint8(node, ctx) -> bool:
    q = ctx.qualified(node) if isinstance(node, (ast.Attribute, ast.Name)) else None
    if q in ("torch.uint8", *_BYTE_TYPES):
        return True
    return isinstance(node, ast.Constant) and node.value in _BYTE_TYPES  # .type("torch.ByteTensor")


def _dtype_arg(call, ctx):
    """What ``.to(...)`` / ``.type(...)`` is given as a dtype: ``dtype=``, or a positional that is one."""
    given = _kw(call, "dtype")
    if given is not None:
        return given
    for a in call.args:
        if _is_uint8(a, ctx):
            return a
    return None


def byte_mask(expr, ctx, line: int, chain=None, depth: int = 0) -> bool:
    """The expression holds a uint8 tensor: made so, or a dtype-keeping op of one (through names, a
    parameter's call sites, and ``self.`` buffers registered in the class)."""
    if depth > 6 or expr is None:
        return False
    chain = chain if chain is not None else ctx.chain()
    if isinstance(expr, ast.Name):
        values = _values(expr.id, chain, line, ctx.bindings)
        return bool(values) and all(
            not (isinstance(v, ast.Name) and v.id == expr.id)
            and byte_mask(v, ctx, getattr(v, "lineno", line), _scopes_of(v, ctx), depth + 1)
            for v in values
        )
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and ctx.klass is not None:
        made = _buffer_value(expr.attr, ctx)
        return made is not None and byte_mask(made, ctx, made.lineno, _scopes_of(made, ctx), depth + 1)
    if isinstance(expr, ast.Subscript):  # mask[:, :n]: the same dtype
        return byte_mask(expr.value, ctx, line, chain, depth + 1)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Invert):  # ~mask of bytes: bytes (255, 254)
        return byte_mask(expr.operand, ctx, line, chain, depth + 1)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, (ast.Add, ast.Sub, ast.Mult, ast.BitOr, ast.BitAnd)):
        # 1 - mask, a | b: bytes stay bytes (with an int, or another byte mask)
        sides = [s for s in (expr.left, expr.right) if not (isinstance(s, ast.Constant) and type(s.value) is int)]
        return bool(sides) and all(byte_mask(s, ctx, line, chain, depth + 1) for s in sides)
    return isinstance(expr, ast.Call) and _byte_call(expr, ctx, line, chain, depth)


def _byte_call(expr, ctx, line, chain, depth) -> bool:
    """A call that makes a uint8 tensor, or keeps the dtype of one."""
    q = ctx.qualified(expr.func)
    if q in _BYTE_TYPES:
        return True
    if _method(expr, "byte") and not expr.args and q is None:
        return True
    if q is not None and q.startswith("torch.") and q.count(".") == 1:
        dtype = _kw(expr, "dtype")
        if dtype is not None:
            return _is_uint8(dtype, ctx)
        if q.rsplit(".", 1)[-1] in _KEEP_DTYPE_FUNCTIONS and expr.args:
            return byte_mask(expr.args[0], ctx, line, chain, depth + 1)
        return False
    if _method(expr, "to", "type") and q is None:
        dtype = _dtype_arg(expr, ctx)
        if dtype is not None:
            return _is_uint8(dtype, ctx)
        return _method(expr, "to") and byte_mask(expr.func.value, ctx, line, chain, depth + 1)
    if _method(expr, "new_ones", "new_zeros", "new_full", "new_empty", "new_tensor") and q is None:
        dtype = _kw(expr, "dtype")
        return _is_uint8(dtype, ctx) if dtype is not None else byte_mask(expr.func.value, ctx, line, chain, depth + 1)
    if isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEP_DTYPE and q is None:
        return byte_mask(expr.func.value, ctx, line, chain, depth + 1)
    fn = ctx.bindings._local_function(expr, chain, line)  # causal_mask(n): what every return of it gives
    values = returned_values(fn) if fn is not None else None
    return bool(values) and all(byte_mask(v, ctx, at, _scopes_of(v, ctx), depth + 1) for v, at in values)


def _buffer_value(attr: str, ctx):
    """What ``self.<attr>`` was made from in the class: ``self.attr = value`` (when it is assigned once),
    or ``self.register_buffer("attr", value)``."""
    assigned = ctx.bindings.self_attributes(ctx.klass).get(attr) or []
    registered = [
        n.args[1]
        for n in walk(ctx.klass)
        if _method(n, "register_buffer")
        and len(n.args) >= 2
        and isinstance(n.args[0], ast.Constant)
        and n.args[0].value == attr
    ]
    values = [v for _, v, _ in assigned] + registered
    return values[0] if len(values) == 1 else None
