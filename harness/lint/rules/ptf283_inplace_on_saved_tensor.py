"""What: an in-place write (``y[...] = v``, ``y += v``, ``y.masked_fill_(m, 0)``) to the output of softmax,
log_softmax, sigmoid, tanh, exp, expm1, exp2, relu, sqrt or rsqrt: ops that keep their output for backward.
Why: they compute their gradient from their result. The write bumps its version, and ``backward()`` stops with
"modified by an inplace operation", pointing at the backward call, not at the write.
Fix: write out of place (``y = y.masked_fill(m, 0)``, ``y = y * keep``, ``y = y + v``) or ``y = y.clone()`` first.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _kw
from torch_pitfalls.lint.rules.shared.flow import _decorated_grad_off, _grad_off

# the ops whose backward reads their result (torch's derivatives.yaml: result, not self)
_SAVE_OUTPUT = ("softmax", "log_softmax", "sigmoid", "tanh", "exp", "expm1", "exp2", "relu", "sqrt", "rsqrt")
_MODULES = ("Softmax", "LogSoftmax", "Sigmoid", "Tanh", "ReLU")
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
# in-place methods that do not write a tensor's values
_NOT_WRITES = ("requires_grad_", "retain_grad_", "share_memory_", "record_stream_", "resize_as_", "names_")


def _saves_its_output(value, ctx) -> bool:
    """``torch.softmax(x, -1)``, ``F.relu(h)`` (``inplace=True`` too: relu_ saves its result as well),
    ``x.sigmoid()``, ``nn.Tanh()(x)``, or a module attribute of the class built as one (``self.act = nn.ReLU()``;
    ``self.act(h)``)."""
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    q = ctx.qualified(func) or ""
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _SAVE_OUTPUT:
        return q.count(".") == 1 or q.startswith(("torch.nn.functional.", "torch.special."))
    if isinstance(func, ast.Call):  # nn.Softmax(dim=1)(x)
        return (ctx.qualified(func.func) or "").rsplit(".", 1)[-1] in _MODULES and (
            ctx.qualified(func.func) or ""
        ).startswith("torch.nn.")
    if isinstance(func, ast.Attribute) and func.attr in _SAVE_OUTPUT and q == "":
        held = ctx.kind(func.value)
        if held == "tensor":  # x.sigmoid()
            return True
    held = ctx.held(func) if isinstance(func, (ast.Name, ast.Attribute)) else None
    return held is not None and held.kind == "module" and (held.what or "").rsplit(".", 1)[-1] in _MODULES


def _written_name(node) -> ast.Name | None:
    """The name an in-place write writes into: ``y[...] = v``, ``y += v``, ``y.masked_fill_(m, 0)``."""
    if isinstance(node, ast.Assign):
        for target in node.targets:
            base = target
            while isinstance(base, ast.Subscript):
                base = base.value
            if base is not target and isinstance(base, ast.Name):
                return base
        return None
    if isinstance(node, ast.AugAssign):
        base = node.target
        while isinstance(base, ast.Subscript):
            base = base.value
        return base if isinstance(base, ast.Name) else None
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr.endswith("_")
        and not node.func.attr.startswith("_")
        and node.func.attr not in _NOT_WRITES
        and isinstance(node.func.value, ast.Name)
    ):
        return node.func.value
    return None


def _backward_runs(fn, ctx):
    """Whether a gradient flows through ``fn``'s tensors: True in the ``forward`` of a module class with something
    to train, or in a function whose own body calls ``.backward()`` or ``torch.autograd.grad``; UNSURE elsewhere
    (a helper or closure whose caller is not read)."""
    if fn is None:
        return UNSURE
    if fn.name == "forward" and (klass := ctx.bindings._owner_class(fn)) is not None:
        return ctx.bindings.is_module_class(klass) and not _frozen_parameters_only(klass, ctx)
    for node in _body_without_nested(fn):
        if isinstance(node, ast.Call) and (
            (isinstance(node.func, ast.Attribute) and node.func.attr == "backward")
            or ctx.qualified(node.func) == "torch.autograd.grad"
        ):
            return True
    return UNSURE


def _body_without_nested(fn):
    """The nodes of ``fn``'s body, not those of the functions, classes and lambdas defined in it."""
    todo = [n for n in fn.body if not isinstance(n, _NESTED)]
    while todo:
        node = todo.pop()
        yield node
        todo += [c for c in ast.iter_child_nodes(node) if not isinstance(c, _NESTED)]


def _frozen_parameters_only(klass: ast.ClassDef, ctx) -> bool:
    """The class holds only parameters it makes with ``requires_grad=False`` and no torch layer: a module with
    nothing to train (a converted model run for inference), whose forward records no graph for its input's sake."""
    parameters = layers = 0
    for node in ast.walk(klass):
        if not isinstance(node, ast.Call):
            continue
        q = ctx.qualified(node.func) or ""
        if q == "torch.nn.Parameter":
            frozen = _kw(node, "requires_grad")
            if not (isinstance(frozen, ast.Constant) and frozen.value is False):
                return False
            parameters += 1
        elif q.startswith("torch.nn.") and q.rsplit(".", 1)[-1][:1].isupper():
            layers += 1
    return parameters > 0 and layers == 0


def _writes_a_saved_output(node, ctx):
    name = _written_name(node)
    if name is None:
        return False
    chain = ctx.chain()
    binding, _ = ctx.bindings.lookup(name.id, chain, node.lineno)
    if binding is None or binding.how != "assign" or not _saves_its_output(binding.value, ctx):
        return False
    fn = chain[0] if chain and isinstance(chain[0], (ast.FunctionDef, ast.AsyncFunctionDef)) else None
    if _grad_off(node, ctx) or (fn is not None and _decorated_grad_off(fn, ctx)):
        return False  # made without a graph: nothing was saved
    return _backward_runs(fn, ctx)


RULE = Rule(
    id="PTF283",
    cases=("inplace-on-saved-tensor",),
    message=(
        "in-place write to the output of an op that saves its output for backward (softmax, sigmoid, tanh, exp, "
        "relu, sqrt...): backward() will fail with 'modified by an inplace operation'; write out of place "
        "(y = y.masked_fill(mask, 0), y = y * keep) or clone() it first"
    ),
    test=_writes_a_saved_output,
    nodes=(ast.Assign, ast.AugAssign, ast.Call),
    needs=("softmax", "sigmoid", "tanh", "exp", "relu", "sqrt", "Softmax", "Sigmoid", "Tanh", "ReLU"),
)
