"""Leaf tensors that require grad, as the autograd rules read them: what makes one (a factory with
``requires_grad=True``, an ``nn.Parameter``, ``requires_grad_()``), a name's last plain assignment, a
flag set on a name between two lines, and what a statement freezes (``requires_grad = False``)."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import _const, _kw, _method
from torch_pitfalls.lint.walking import kept_on, walk

_PARAMETERS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


def _true(node) -> bool:
    return isinstance(node, ast.Constant) and node.value is True


def _leaf_source(node, ctx) -> bool:
    """A call that makes a leaf tensor requiring grad: a torch factory with ``requires_grad=True``, an
    ``nn.Parameter`` (requires_grad not False), ``x.requires_grad_()``."""
    if not isinstance(node, ast.Call):
        return False
    q = ctx.qualified(node.func) or ""
    if q in _PARAMETERS:
        flag = _kw(node, "requires_grad")
        if flag is None and len(node.args) > 1:
            flag = node.args[1]
        return flag is None or _true(flag)
    if q.startswith("torch.") and _true(_kw(node, "requires_grad")):
        return True
    if isinstance(node.func, ast.Attribute) and node.func.attr == "requires_grad_" and q == "":
        return not node.args or _true(node.args[0])
    return False


def _last_assign(name: str, ctx, line: int):
    """(value, line, scopes) of the last plain assignment of ``name`` above ``line`` (an augmented one,
    ``w -= ...`` in place, leaves the tensor the same), or None."""
    for i, scope_node in enumerate(ctx.chain()):
        scope = ctx.bindings.scope(scope_node)
        if name in scope.declared or name not in scope.names:
            continue
        found = [b for b in scope.names[name] if (i > 0 or b.line < line) and not scope.exclusive(b.line, line)]
        found = [b for b in found if b.how != "aug"]
        if not found or found[-1].how != "assign":
            return None
        b = found[-1]
        return b.value, b.line, scope_node
    return None


def _flag_set_between(name: str, scope_node, after: int, before: int) -> bool:
    """``name.requires_grad = True`` or ``name.requires_grad_()`` between two lines of the scope."""
    return any(after < line < before for line in kept_on(scope_node, "_requires_grad_set", _flags_set).get(name, ()))


def _flags_set(scope_node) -> dict[str, list[int]]:
    """The lines of the scope where a name's ``requires_grad`` is turned on, by name (found once per scope)."""
    found: dict[str, list[int]] = {}
    for n in walk(scope_node):
        if isinstance(n, ast.Assign) and _true(n.value):
            for t in n.targets:
                if isinstance(t, ast.Attribute) and t.attr == "requires_grad" and isinstance(t.value, ast.Name):
                    found.setdefault(t.value.id, []).append(n.lineno)
        elif (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr == "requires_grad_"
            and isinstance(n.func.value, ast.Name)
            and (not n.args or _true(n.args[0]))
        ):
            found.setdefault(n.func.value.id, []).append(n.lineno)
    return found


def _freeze(node) -> ast.AST | None:
    """The expression frozen: ``x`` of ``x.requires_grad_(False)`` or ``x.requires_grad = False``."""
    if isinstance(node, ast.Call) and _method(node, "requires_grad_"):
        flag = node.args[0] if node.args else _kw(node, "requires_grad")
        return node.func.value if _const(flag, False) else None
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Attribute)
        and node.targets[0].attr == "requires_grad"
        and _const(node.value, False)
    ):
        return node.targets[0].value
    return None
