"""What: ``torch.save`` of a view of a larger tensor (``x[:n]``, ``x[i]``, ``x.narrow(...)``, a ``split``/``chunk``
piece), or of a list, tuple or dict holding one.
Why: torch.save writes the whole storage a view looks into (so that saved views still share it): five rows
of a 100,000-row table cost the whole table on disk and in memory once loaded. ``.contiguous()`` of a
first-dimension slice returns the same view, so it does not help.
Fix: save a copy that owns its storage: ``torch.save(x[:n].clone(), path)``.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _is_call_to
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values

# tensor methods whose result is a view of part of the receiver's storage
_PART_VIEWS = ("narrow", "select", "diagonal", "unfold")
# methods and torch functions that return a tuple of views into the receiver
_PIECES = ("split", "chunk", "unbind", "tensor_split", "hsplit", "vsplit")
# methods that hand back the same storage (a view of the whole, or the tensor itself where it already is so)
_SAME_STORAGE = ("detach", "view", "view_as", "reshape", "squeeze", "unsqueeze", "flatten", "requires_grad_")


def _tensor(node, ctx, line: int):
    """The expression holds a tensor: True where the bindings prove it, UNSURE where unknown."""
    held = ctx.held(node, line)
    if held is not None:
        if held.kind == "tensor" and held.what in ("batch", "output"):
            return UNSURE  # a loader's batch, a model's output: maybe a tuple, whose item is no view
        return held.kind == "tensor"
    if isinstance(node, ast.Name) and ctx.qualified(node) is None:
        return UNSURE
    return False


def _basic_index(index, ctx, line: int) -> tuple[bool, bool] | None:
    """(a part of the tensor, along the first dimension only) for basic indexing (slices, ints); None for
    advanced indexing (a mask, an index tensor: a copy) or an index the file does not show."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    first_only = all(
        isinstance(p, ast.Slice) and p.lower is None and p.upper is None and p.step is None for p in parts[1:]
    )
    head = parts[0]
    if isinstance(head, ast.Slice):
        if head.lower is None and head.upper is None and head.step is None:
            # x[:] or x[:, :k]: the whole first dimension
            later = any(not (isinstance(p, ast.Slice) and p.lower is None and p.upper is None) for p in parts[1:])
            return (later, False) if all(_simple(p, ctx, line) for p in parts[1:]) else None
        return (True, first_only and head.step is None) if all(_simple(p, ctx, line) for p in parts) else None
    if _int_like(head, ctx, line):
        return (True, first_only) if all(_simple(p, ctx, line) for p in parts[1:]) else None
    return None


def _simple(p, ctx, line) -> bool:
    return isinstance(p, ast.Slice) or _int_like(p, ctx, line) or (isinstance(p, ast.Constant) and p.value is Ellipsis)


def _int_like(node, ctx, line) -> bool:
    """An int index: a literal, ``-1``, or a loop counter over ``range``/``enumerate``."""
    if isinstance(node, ast.Constant):
        return type(node.value) is int
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return _int_like(node.operand, ctx, line)
    if isinstance(node, ast.Name):
        binding, _ = ctx.bindings.lookup(node.id, ctx.chain(), line)
        if binding is None:
            return False
        if binding.how == "iter" and isinstance(binding.value, ast.Call):
            return getattr(binding.value.func, "id", None) == "range"
        if binding.how == "other":  # ``for i, x in enumerate(...)``: the index
            up = [n for n in ast.walk(ctx.function) if isinstance(n, ast.For) and n.lineno == binding.line]
            return any(
                isinstance(f.iter, ast.Call)
                and getattr(f.iter.func, "id", None) == "enumerate"
                and isinstance(f.target, ast.Tuple)
                and isinstance(f.target.elts[0], ast.Name)
                and f.target.elts[0].id == node.id
                for f in up
            )
        if binding.how == "assign":
            v = binding.value
            return isinstance(v, ast.Constant) and type(v.value) is int
    return False


def _view(node, ctx, line: int, depth: int = 0):
    """The expression is a view of part of a larger tensor: True, UNSURE (the sliced object's type is not
    known), or False. ``.contiguous()`` of a first-dimension part is still that part (no copy)."""
    if depth > 6:
        return False
    if isinstance(node, ast.Name):
        return _named_view(node, ctx, line, depth)
    if isinstance(node, ast.Subscript):
        piece = _piece_of(node, ctx, line, depth)
        if piece is not False:
            return piece
        kind = _basic_index(node.slice, ctx, line)
        if kind is None or not kind[0]:
            return False
        found = _tensor(node.value, ctx, line)
        # results[0], dataset[:n] of an object the file does not show: a list's item or slice, most often
        return found is True
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr in _PART_VIEWS:
            return _tensor(node.func.value, ctx, line) if node.args else False
        if attr == "contiguous" and not node.args:
            return _view(node.func.value, ctx, line, depth + 1) if _first_dim(node.func.value, ctx, line) else False
        if attr in ("detach",) and not node.args:
            return _view(node.func.value, ctx, line, depth + 1)
    return False


def _first_dim(node, ctx, line: int, depth: int = 0) -> bool:
    """The view is a part along the first dimension (so it is contiguous where its base is)."""
    if depth > 6:
        return False
    if isinstance(node, ast.Name):
        value = ctx.value_of(node, line)
        return value is not None and _first_dim(value, ctx, line, depth + 1)
    if isinstance(node, ast.Subscript):
        kind = _basic_index(node.slice, ctx, line)
        return kind is not None and kind[1]
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        if attr in ("narrow", "select"):
            dim = node.args[0] if node.args else None
            return isinstance(dim, ast.Constant) and dim.value == 0
        if attr == "detach":
            return _first_dim(node.func.value, ctx, line, depth + 1)
    return False


def _pieces_call(node, ctx) -> ast.AST | None:
    """``x.split(...)``, ``torch.chunk(x, ...)``: the tensor it splits, or None."""
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func)
    if q is not None and q.startswith("torch.") and q.rsplit(".", 1)[-1] in _PIECES and q.count(".") == 1:
        return node.args[0] if node.args else None
    if q is None and isinstance(node.func, ast.Attribute) and node.func.attr in _PIECES:
        return node.func.value
    return None


def _piece_of(node, ctx, line, depth):
    """``x.chunk(4)[0]``: one piece of a split."""
    whole = _pieces_call(node.value, ctx)
    if whole is None:
        return False
    return _tensor(whole, ctx, line)


def _named_view(name, ctx, line, depth):
    """A name bound to a view (``head = table[:k]``; ``a, b = x.split(n)``; a parameter every call of the
    module passes one for)."""
    binding, where = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if binding is None:
        return False
    if binding.how == "item" and binding.value is not None:  # a, b = x.chunk(2)
        whole = _pieces_call(binding.value, ctx)
        return _tensor(whole, ctx, binding.line) if whole is not None else False
    if binding.how == "iter" and binding.value is not None:  # for piece in x.split(n)
        iterable = binding.value
        if isinstance(iterable, ast.Name):
            iterable = ctx.bindings.value_of(iterable.id, where, binding.line) or iterable
        whole = _pieces_call(iterable, ctx)
        return _tensor(whole, ctx, binding.line) if whole is not None else False
    if binding.how == "assign":
        whole = _pieces_call(binding.value, ctx)  # pieces = x.chunk(4): a tuple of views
        if whole is not None:
            return _tensor(whole, ctx, binding.line)
        return _view(binding.value, ctx, binding.line, depth + 1)
    if binding.how == "param" and ctx.module is not None:
        values = _values(name.id, ctx.chain(), line, ctx.bindings)
        if not values:
            return False
        found = [_at_site(v, ctx, depth) for v in values]
        if any(f is True for f in found):
            return True
        return UNSURE if any(f is UNSURE for f in found) else False
    return False


def _at_site(value, ctx, depth):
    """What a call site passes, read in the scopes of that call (its line)."""
    line = getattr(value, "lineno", 1 << 30) + 1
    saved = ctx.function, list(ctx.scopes)
    scopes = _scopes_of(value, ctx)
    try:
        ctx.scopes[:] = list(reversed(scopes))
        ctx.function = scopes[0]
        return _view(value, ctx, line, depth + 1)
    finally:
        ctx.function, ctx.scopes[:] = saved[0], saved[1]


def _holds_view(node, ctx, line):
    """The saved object is a view, or a list/tuple/dict literal holding one, or a whole split."""
    if isinstance(node, (ast.List, ast.Tuple)):
        found = [_holds_view(e, ctx, line) for e in node.elts]
    elif isinstance(node, ast.Dict):
        found = [_holds_view(v, ctx, line) for v in node.values]
    else:
        whole = _pieces_call(node, ctx)
        if whole is not None:  # torch.save(x.chunk(10), path): every piece, the whole storage each
            return _tensor(whole, ctx, line)
        return _view(node, ctx, line)
    if any(f is True for f in found):
        return True
    return UNSURE if any(f is UNSURE for f in found) else False


def _saves_a_view(node, ctx):
    if not (_is_call_to(node, ctx, "torch.save") and node.args):
        return False
    return _holds_view(node.args[0], ctx, node.lineno)


RULE = Rule(
    "PTF246",
    ("saved-view-keeps-whole-storage",),
    "torch.save of a view (a slice, an index, a split piece) writes the whole storage it views, not just "
    "its elements; save a copy: torch.save(x[:n].clone(), path) (.contiguous() of a first-dimension slice "
    "does not copy)",
    _saves_a_view,
    nodes=CALL,
    calls=("save",),
    harm="memory",
    needs=("save",),
)
