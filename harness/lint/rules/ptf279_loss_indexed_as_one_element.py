"""What: a full reduction indexed as if it had an element 0: ``loss.data[0]``, ``criterion(out, y)[0]``,
``x.sum().data[0]``.
Why: Since torch 0.4 a loss with reduction "mean" or "sum" (and an argument-less ``.sum()``/``.mean()``) is a
0-dim tensor with no axis to index; 0.4 warned, and from 1.0 it raises IndexError: invalid index of a 0-dim
tensor, at the first step.
Fix: read the number with ``loss.item()`` (or ``float(loss)``)."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import Rule, _kw
from torch_pitfalls.lint.rules.shared.losses import FUNCTIONAL_LOSSES
from torch_pitfalls.lint.rules.shared.modules import constructions

# what leaves a tensor's shape as it was, between the reduction and the index
_SAME_SHAPE = ("data", "detach", "cpu", "cuda", "float", "double", "clone")
_REDUCTIONS = ("sum", "mean", "norm", "prod", "max", "min", "std", "var")


def _through_same_shape(node):
    """``loss.data.cpu()`` -> ``loss``: the expression whose shape the indexed value has."""
    while True:
        if isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _SAME_SHAPE
            and not node.args
        ):
            node = node.func.value
        else:
            return node


def _reduced(call) -> bool:
    """A reduction keyword that keeps one number: absent (the default, "mean"), "mean" or "sum"; of the legacy
    keywords, ``size_average`` either way (a mean or a sum) but not ``reduce=False``."""
    reduction = _kw(call, "reduction")
    if reduction is None:
        reduce = _kw(call, "reduce")
        return reduce is None or (isinstance(reduce, ast.Constant) and reduce.value is True)
    return isinstance(reduction, ast.Constant) and reduction.value in ("mean", "sum")


def _a_number(node) -> bool:
    """A plain number: a literal, ``x.size(0)``, ``len(x)``, ``int(...)``/``float(...)``, and arithmetic of those."""
    if isinstance(node, ast.Constant):
        return type(node.value) in (int, float)
    if isinstance(node, ast.BinOp):
        return _a_number(node.left) and _a_number(node.right)
    if isinstance(node, ast.UnaryOp):
        return _a_number(node.operand)
    if isinstance(node, ast.Call):
        name = getattr(node.func, "id", None) or getattr(node.func, "attr", None)
        return name in ("len", "int", "float", "size", "numel") and not (name == "size" and not node.args)
    return False


def _zero_dim(node, ctx, chain, line: int, depth: int = 0) -> bool:
    """``node`` (read in the scopes ``chain`` at ``line``) holds a 0-dim tensor: a loss function's or a loss
    module's output with a full reduction, an argument-less reduction method of a tensor (``x.sum()``), or a
    name bound to one of those, here or in what a function of the module returns (``loss, _ = step(x)``)."""
    if depth > 4:
        return False
    if isinstance(node, ast.Name):
        return any(
            _zero_dim(_through_same_shape(value), ctx, where, at, depth + 1)
            for value, where, at in _bound_values(node, ctx, chain, line)
        )
    if isinstance(node, ast.Attribute) and _on_self(node, chain) and (klass := _class_of(chain, ctx)) is not None:
        assigned = ctx.bindings.self_attributes(klass).get(node.attr) or []  # self.loss = self.criterion(...)
        return bool(assigned) and all(
            _zero_dim(_through_same_shape(v), ctx, (m, *chain[-1:]), at + 1, depth + 1) for m, v, at in assigned
        )
    if isinstance(node, ast.UnaryOp):
        return _zero_dim(node.operand, ctx, chain, line, depth + 1)
    if isinstance(node, ast.BinOp):  # bce + kl, -0.5 * kl, kl / n: a number with a number stays one
        sides = [(s, _zero_dim(s, ctx, chain, line, depth + 1)) for s in (node.left, node.right)]
        return any(z for _, z in sides) and all(z or _a_number(s) for s, z in sides)
    if not isinstance(node, ast.Call):
        return False
    q = ctx.qualified(node.func) or ""
    if q.startswith("torch.nn.functional.") and q.rsplit(".", 1)[-1] in FUNCTIONAL_LOSSES:
        return _reduced(node)
    if q.startswith("torch.") and q.count(".") == 1 and q[6:] in _REDUCTIONS:  # torch.sum(x): the whole tensor
        return len(node.args) == 1 and not node.keywords
    bindings = ctx.bindings
    fn = bindings._local_function(node, chain, line)
    if fn is not None:  # a loss helper of the module: every return a full reduction
        return _returns_zero_dim(fn, ctx, chain, depth)
    if isinstance(node.func, ast.Attribute) and node.func.attr in _REDUCTIONS:
        receiver = bindings.held(node.func.value, chain, line)
        return not node.args and not node.keywords and receiver is not None and receiver.kind == "tensor"
    if isinstance(node.func, ast.Call):  # nn.MSELoss()(pred, y)
        return _a_loss(node.func, ctx) and _reduced(node.func)
    if isinstance(node.func, ast.Attribute) and _on_self(node.func, chain) and (klass := _class_of(chain, ctx)):
        method = next((m for m in klass.body if isinstance(m, ast.FunctionDef) and m.name == node.func.attr), None)
        if method is not None:  # self.set_forward_loss(x): what the method returns
            return _returns_zero_dim(method, ctx, chain, depth)
        built = [v for _, v, _ in ctx.bindings.self_attributes(klass).get(node.func.attr) or []]
        return bool(built) and all(isinstance(b, ast.Call) and _a_loss(b, ctx) and _reduced(b) for b in built)
    if not isinstance(node.func, ast.Name):
        return False
    built = constructions(node.func, chain, line, None, ctx)  # criterion = nn.MSELoss(...), passed on, .cuda()'d
    return bool(built) and all(_a_loss(b, ctx) and _reduced(b) for b, _ in built)


def _returns_zero_dim(fn, ctx, chain, depth: int) -> bool:
    """Every return of ``fn`` (a function or a method of the module) is a 0-dim tensor."""
    returned = returned_values(fn) or []
    return bool(returned) and all(
        _zero_dim(_through_same_shape(v), ctx, (fn, *chain[-1:]), at + 1, depth + 1) for v, at in returned
    )


def _class_of(chain, ctx):
    """The module-level class whose method ``chain`` starts in (asked only where ``self.`` is read)."""
    return ctx.bindings._owner_class(chain[0]) if chain and isinstance(chain[0], ast.FunctionDef) else None


def _on_self(node, chain) -> bool:
    """``self.x``, in a method (its first parameter)."""
    fn = chain[0] if chain else None
    me = fn.args.args[0].arg if isinstance(fn, ast.FunctionDef) and fn.args.args else None
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == me


def _a_loss(call, ctx) -> bool:
    q = ctx.qualified(call.func) or ""
    return q.startswith("torch.nn.") and q.endswith("Loss") and not q.startswith("torch.nn.functional.")


def _bound_values(name, ctx, chain, line) -> list:
    """(expression, its scopes, its line) that ``name`` may hold: its assignment, or the matching element of
    what a function of the module returns where it was unpacked from that function's call."""
    bindings = ctx.bindings
    binding, where = bindings.lookup(name.id, chain, line)
    if binding is None:
        return []
    if binding.how == "assign":
        return [(binding.value, where, binding.line)]
    if binding.how == "aug":  # loss /= n: what it held before
        return [(name, where, binding.line)]
    if binding.how == "param":  # what every call of the function hands it
        return [(value, site, at) for value, site, at, _ in bindings.passed(where[0], name.id) or ()]
    if binding.how == "item" and binding.index is not None:
        fn = bindings._local_function(binding.value, where, binding.line)
        if fn is not None:
            return [(value, (fn, *where[-1:]), at + 1) for value, at in returned_values(fn, binding.index) or ()]
    return []


def _scalar_indexed(node, ctx) -> bool:
    if not (
        isinstance(node, ast.Subscript)
        and isinstance(node.ctx, ast.Load)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
    ):
        return False
    return _zero_dim(_through_same_shape(node.value), ctx, ctx.chain(), node.lineno)


RULE = Rule(
    "PTF279",
    ("loss-indexed-as-one-element",),
    "a full reduction (a loss's mean or sum, x.sum()) is a 0-dim tensor: indexing it (loss.data[0]) raises "
    "IndexError: invalid index of a 0-dim tensor (since torch 1.0; 0.4 warned); read the number with loss.item()",
    _scalar_indexed,
    nodes=ast.Subscript,
)
