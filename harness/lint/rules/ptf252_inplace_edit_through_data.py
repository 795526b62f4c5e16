"""What: a parameter or activation edited in place through ``.data`` (``p.data.clamp_(...)``, ``w.data = ...``;
also by a helper handed the module) after the forward pass that used it and before that loss's ``backward()``.
Why: ``.data`` bypasses autograd's version check: backward silently reads the edited values, so the gradients
of the layers below belong to a loss nobody computed (the same edit under no_grad would raise instead).
Fix: constrain weights after ``optimizer.step()`` (or before the forward), in place under ``torch.no_grad()``.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _method
from torch_pitfalls.lint.rules.shared.flow import _grad_off, _own_code, context_at
from torch_pitfalls.lint.walking import walk

_ITERATE_PARAMETERS = ("parameters", "named_parameters", "buffers")


def _dotted(node) -> str | None:
    """``self.dis`` for ``self.dis``, ``layer2`` for a name; None for anything else."""
    parts = []
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Attribute):
            parts.append(node.attr)
        node = node.value  # net[2].weight: a parameter of net
    if not isinstance(node, ast.Name):
        return None
    return ".".join([node.id, *reversed(parts)])


def _edited_data(node):
    """The tensor whose ``.data`` the statement edits in place: ``X.data.op_(...)``, ``X.data = v``,
    ``X.data[i] = v``, ``X.data += v``; else None."""
    if isinstance(node, ast.Call):
        func = node.func
        if (
            isinstance(func, ast.Attribute)
            and func.attr.endswith("_")
            and not func.attr.startswith("_")
            and func.attr not in ("requires_grad_", "share_memory_", "retain_grad_")
            and isinstance(func.value, ast.Attribute)
            and func.value.attr == "data"
        ):
            return func.value.value
        return None
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AugAssign) else []
    for t in targets:
        if isinstance(t, ast.Subscript):
            t = t.value
        if isinstance(t, ast.Attribute) and t.attr == "data":
            return t.value
    return None


def _owner(tensor, ctx, line):
    """What the edited tensor belongs to: ("module", dotted name of the module) for a parameter
    (``p`` of ``for p in D.parameters()``, ``layer.weight``, ``self.fc.bias``), ("tensor", name) for a
    name bound in this function; None otherwise."""
    if isinstance(tensor, ast.Name):
        binding, _where = ctx.bindings.lookup(tensor.id, ctx.chain(), line)
        if binding is None:
            return None
        it = binding.value
        if binding.how == "iter" and _method(it, *_ITERATE_PARAMETERS):
            owner = _dotted(it.func.value)
            return ("module", owner) if owner else None
        if binding.how == "iter" and isinstance(it, ast.Call) and getattr(it.func, "id", None) == "zip":
            return None
        if binding.how in ("assign", "item"):
            return ("tensor", tensor.id)
        return None
    if (
        isinstance(tensor, ast.Attribute)
        and tensor.attr in ("weight", "bias")
        or (isinstance(tensor, ast.Attribute) and ctx.kind(tensor.value) == "module")
    ):
        owner = _dotted(tensor.value)
        return ("module", owner) if owner else None
    return None


def _loss_reads(loss_value, ctx, line, depth=0, seen=None):
    """The names and called modules the loss was computed from, followed through this function's own
    assignments, not into values made with gradients off: (names read, dotted names called)."""
    names, called = set(), set()
    seen = seen if seen is not None else set()
    todo = [(loss_value, line, 0)]
    while todo:
        expr, at, d = todo.pop()
        for n in walk(expr):
            if isinstance(n, ast.Call):
                dotted = _dotted(n.func)
                if dotted:
                    called.add(dotted)
                    if isinstance(n.func, ast.Attribute):
                        inner = _dotted(n.func.value)
                        if inner:
                            called.add(inner)  # self.dis.forward(x), D.module(x)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id not in seen and d < 8:
                seen.add(n.id)
                names.add(n.id)
                binding, _ = ctx.bindings.lookup(n.id, ctx.chain(), at)
                if binding is not None and binding.how in ("assign", "item", "aug") and binding.value is not None:
                    if not _grad_off(binding.value, ctx):  # ``with torch.no_grad(): fake = G(z)``: no graph
                        todo.append((binding.value, binding.line, d + 1))
    return names, called


def _uses_module(owner: str, called: set) -> bool:
    return any(c == owner or c.startswith(owner + ".") or owner.startswith(c + ".") for c in called)


def _helper_edit(call, ctx):
    """A call of a function of this file that edits ``.data`` of the parameters of a module it is handed
    (``enforce_lipschitz(critic, clip)`` clamping ``p.data`` for ``p`` in ``net.parameters()``): ("module",
    the module handed, dotted), else None."""
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Name)):
        return None
    fn = ctx.bindings.module_function(call.func.id)
    if fn is None:
        return None
    handed = arguments(call, fn)
    for n in walk(fn):
        tensor = _edited_data(n)
        inner = context_at(n, ctx) if tensor is not None else None
        owner = _owner(tensor, inner, n.lineno) if inner is not None else None
        if owner is not None and owner[0] == "module" and owner[1] in handed:
            dotted = _dotted(handed[owner[1]])
            return ("module", dotted) if dotted else None
    return None


def _edit_between_forward_and_backward(node, ctx):
    if ctx.function is None:
        return False
    tensor = _edited_data(node)
    owner = _helper_edit(node, ctx) if tensor is None else None
    if tensor is None and owner is None:
        return False
    if getattr(ctx.function, "name", None) == "__init__" or not _own_code(node, ctx):
        return False
    line = node.lineno
    owner = owner or _owner(tensor, ctx, line)
    if owner is None:
        return False
    found = False
    for call in walk(ctx.function):
        if not (_method(call, "backward") and call.lineno > line and isinstance(call.func.value, ast.Name)):
            continue
        if not _own_code(call, ctx):
            continue
        loss = call.func.value
        binding, _where = ctx.bindings.lookup(loss.id, ctx.chain(), call.lineno)
        if binding is None or binding.how not in ("assign", "item") or binding.line >= line:
            continue  # the loss is computed after the edit: the forward already sees the new values
        made, _ = ctx.bindings.lookup(owner[1], ctx.chain(), line) if owner[0] == "tensor" else (None, None)
        if made is not None and binding.line < made.line:
            continue  # the edited tensor was made after the loss: not in its graph
        names, called = _loss_reads(binding.value, ctx, binding.line)
        if owner[0] == "module" and _uses_module(owner[1], called):
            return True
        if owner[0] == "tensor" and owner[1] in names:
            return True
        found = found or UNSURE
    return found


RULE = Rule(
    "PTF252",
    ("inplace-edit-through-data",),
    "a tensor the forward pass used is edited in place through .data before that loss's backward(): autograd "
    "is not told, so backward silently uses the edited values and the gradients below are wrong; apply the "
    "constraint after optimizer.step() (or before the forward), in place under torch.no_grad()",
    _edit_between_forward_and_backward,
    nodes=(ast.Call, ast.Assign, ast.AugAssign),
    needs=(".data",),
)
