"""What: An in-place op that would turn an integer tensor into a float one (t += 0.5, t /= 2, t **= 0.75).
Why: An in-place op cannot change the tensor's dtype: RuntimeError (result type Float can't be cast).
Fix: convert first (t = t.float()) or write it out of place.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _called_name, _kw, _method
from torch_pitfalls.lint.rules.shared.options import option_default
from torch_pitfalls.lint.rules.shared.tensors import _int_expr
from torch_pitfalls.lint.walking import walk


def _integer_tensor(value, ctx) -> bool:
    """A tensor known to hold integers: ``torch.tensor([0, 1])`` of int literals, ``torch.arange(n)``
    of ints, ``torch.randint``, ``.long()``/``.int()``, or an integer ``dtype=``."""
    if _method(value, "long", "int", "short", "byte"):
        return True
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualified(value.func) or ""
    dtype = _kw(value, "dtype")
    if dtype is not None:
        return (ctx.qualified(dtype) or "").split(".")[-1] in (
            "long",
            "int",
            "int64",
            "int32",
            "int16",
            "int8",
            "uint8",
            "short",
        )
    if q in ("torch.tensor", "torch.as_tensor") and value.args and isinstance(value.args[0], (ast.List, ast.Tuple)):
        elts = [e for e in walk(value.args[0]) if isinstance(e, ast.Constant)]
        return bool(elts) and all(type(e.value) is int for e in elts)
    if q == "torch.arange":
        return all(_int_expr(a) for a in value.args) and bool(value.args)
    if q in ("torch.from_numpy", "torch.as_tensor", "torch.tensor") and value.args:  # they keep the array's dtype
        return _integer_array(ctx.resolve(value.args[0], value.lineno), ctx)
    # makers whose result is int64 whatever they are given: counts and indices
    return q in ("torch.randint", "torch.randperm", "torch.bincount", "torch.argsort", "torch.searchsorted")


_INT_DTYPES = (
    "int",
    "int64",
    "int32",
    "int16",
    "int8",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "intp",
    "long",
    "longlong",
    "short",
    "byte",
    "bool_",
)


def _int_dtype(dtype, ctx) -> bool:
    """``np.int64``, ``int``, ``"int32"``, ``np.dtype("int64")``: an integer dtype, as NumPy spells one."""
    if isinstance(dtype, ast.Call) and _called_name(dtype) == "dtype" and dtype.args:
        dtype = dtype.args[0]
    if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str):
        return dtype.value.lstrip("<>=|") in _INT_DTYPES or dtype.value.lstrip("<>=|") in ("i8", "i4", "i2", "u1")
    if isinstance(dtype, ast.Name) and dtype.id == "int":
        return True
    q = ctx.qualified(dtype) or ""
    return q.startswith("numpy.") and q.split(".")[-1] in _INT_DTYPES


def _integer_array(value, ctx) -> bool:
    """A NumPy array whose integer dtype the code states: ``a.astype(np.int64)``, ``np.zeros(n, dtype=int)``,
    ``np.arange(10)`` of ints, ``np.random.randint(...)``."""
    if not isinstance(value, ast.Call):
        return False
    if _method(value, "astype") and value.args:
        return _int_dtype(value.args[0], ctx)
    q = ctx.qualified(value.func) or ""
    if not q.startswith("numpy."):
        return False
    dtype = _kw(value, "dtype")
    if dtype is not None:
        return _int_dtype(dtype, ctx)
    last = q.split(".")[-1]
    if last == "arange":
        return bool(value.args) and all(_int_expr(a) for a in value.args)
    return q in ("numpy.random.randint", "numpy.random.permutation") and bool(value.args) and _int_expr(value.args[0])


def _inplace_float_into_int(node, ctx) -> bool:
    """``labels *= 0.9`` (or ``freq **= power`` with a float power) on an integer tensor: an in-place op cannot
    change the dtype (RuntimeError)."""
    if not (
        isinstance(node, ast.AugAssign)
        and isinstance(node.target, ast.Name)
        and isinstance(node.op, (ast.Mult, ast.Add, ast.Sub, ast.Div, ast.Pow))
    ):
        return False
    floaty = isinstance(node.op, ast.Div) or _float_value(node.value, ctx, node.lineno)
    return floaty and _integer_tensor(ctx.value_of(node.target, node.lineno), ctx)


def _float_value(expr, ctx, line: int) -> bool:
    """A float the code shows: a float constant, or a parameter every call of the file passes one for (a
    constant, or a command-line option whose default is one: ``args.neg_power`` of ``default=0.75``)."""
    if isinstance(expr, ast.Constant):
        return type(expr.value) is float
    if not isinstance(expr, ast.Name):
        return False
    binding, where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
    if binding is None or binding.how != "param":
        return False
    passed = ctx.bindings.passed(where[0], expr.id)
    return bool(passed) and all(
        (isinstance(v, ast.Constant) and type(v.value) is float)
        or (isinstance(d := option_default(v, ctx, chain, at), ast.Constant) and type(d.value) is float)
        for v, chain, at, _ in passed
    )


RULE = Rule(
    "PTF023",
    ("inplace-op-cannot-promote",),
    "an in-place op cannot change an integer tensor into a float one (RuntimeError: result type Float "
    "can't be cast); convert first (t = t.float()) or write it out of place",
    _inplace_float_into_int,
    nodes=ast.AugAssign,
)
