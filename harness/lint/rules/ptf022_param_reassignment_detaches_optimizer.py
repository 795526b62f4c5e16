"""What: A new nn.Parameter assigned to a module after its optimizer was built (here, or by a helper it calls).
Why: The optimizer still holds the old tensor: the new parameter is never updated.
Fix: copy into the existing parameter under torch.no_grad(), or build the optimizer afterwards.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _is_call_to
from torch_pitfalls.lint.rules.shared.modules import _construction
from torch_pitfalls.lint.walking import walk


def _parameter_replaced_after_optimizer(node, ctx) -> bool:
    """``m.weight = nn.Parameter(...)`` after an optimizer was built over ``m``'s parameters: the
    optimizer keeps updating the old tensor and never sees the new one."""
    if not (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Attribute)
        and _is_call_to(node.value, ctx, "torch.nn.Parameter", "torch.nn.parameter.Parameter")
    ):
        return False
    roots = _model_roots(node.targets[0].value, ctx, node.lineno)
    return any(_optimized_before(root, node.lineno, ctx) or _optimized_by_callers(root, ctx) for root in roots)


def _optimized_by_callers(root, ctx) -> bool:
    """``root`` is a parameter of a helper of the module (``set_prior_bias(linear, prior)``), and a call of
    it hands over a part of a model an optimizer was already built over, above the call in the caller
    (``optimizer = Adam(model.parameters())`` ... ``set_prior_bias(model.head, 0.01)``)."""
    if not isinstance(root, ast.Name) or not isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    binding, where = ctx.bindings.lookup(root.id, ctx.chain(), 1 << 30)
    if binding is None or binding.how != "param" or where[0] is not ctx.function:
        return False
    for value, caller, line, _klass in ctx.bindings.passed(ctx.function, root.id) or ():
        part = value
        while isinstance(part, (ast.Attribute, ast.Subscript)):
            part = part.value
        if isinstance(part, ast.Name) and part.id not in ("self", "cls"):
            if any(c.lineno < line and _mentions(c, part) for c in _optimizer_calls(caller[0], ctx)):
                return True
    return False


def _model_roots(expr, ctx, line, depth=0) -> list:
    """What the assigned-to object is a part of: a name (``net`` of ``net.fc``), or a ``self.``
    attribute (``self.model`` of ``self.model.module.fc``); through local aliases (``bn =
    net.layer4[-1].bn3``) and both arms of a conditional one (``head = m.module.fc if ... else m.fc``)."""
    if depth > 4:
        return []
    if isinstance(expr, ast.IfExp):
        return _model_roots(expr.body, ctx, line, depth + 1) + _model_roots(expr.orelse, ctx, line, depth + 1)
    root = expr
    while isinstance(root, (ast.Attribute, ast.Subscript)):
        if isinstance(root, ast.Attribute) and getattr(root.value, "id", None) == "self":
            return [root]
        root = root.value
    if not isinstance(root, ast.Name) or root.id in ("self", "cls"):
        return []
    part = ctx.value_of(root, line)
    if isinstance(part, (ast.Attribute, ast.Subscript, ast.IfExp)):
        return _model_roots(part, ctx, line, depth + 1)
    return [root]


def _optimizer_calls(function, ctx, depth: int = 0):
    """The calls in ``function`` that build an optimizer: a torch.optim class, or a function of this file that
    builds one (``optimizer = build_optimizer(model, cfg)``)."""
    for n in walk(function):
        if isinstance(n, ast.Call):
            q = ctx.qualified(n.func) or ""
            if q.startswith("torch.optim.") and q.split(".")[-1][:1].isupper() and "lr_scheduler" not in q:
                yield n
            elif depth < 2 and isinstance(n.func, ast.Name) and _builds_an_optimizer(n.func.id, ctx, depth):
                yield n


def _builds_an_optimizer(name: str, ctx, depth: int) -> bool:
    helper = ctx.bindings.module_function(name)
    return helper is not None and next(_optimizer_calls(helper, ctx, depth + 1), None) is not None


def _mentions(call: ast.Call, root) -> bool:
    return any(ast.dump(x) == ast.dump(root) for a in call.args for x in walk(a))


def _optimized_before(root, line, ctx) -> bool:
    """An optimizer was built over ``root``'s parameters before ``line``: above it in this function, or,
    for ``self.model``, in the class's construction (``__init__`` runs before any other method), over
    ``self.model`` or over the local it was stored from (``opt = AdamW(model.parameters()); self.model
    = DDP(model)``)."""
    if any(c.lineno < line and _mentions(c, root) for c in _optimizer_calls(ctx.function, ctx)):
        return True
    if isinstance(root, ast.Name) or ctx.klass is None or getattr(ctx.function, "name", "") in _construction(ctx.klass):
        return False
    for method, value, _ in ctx.bindings.self_attributes(ctx.klass).get(root.attr, ()):
        if method.name not in _construction(ctx.klass):
            continue
        local = ctx.bindings.scope(method).names  # ``model`` of ``self.model = DDP(model)``, not ``self``/``nn``
        sources = [root] + [n for n in walk(value) if isinstance(n, ast.Name) and n.id in local and n.id != "self"]
        if any(_mentions(c, src) for c in _optimizer_calls(method, ctx) for src in sources):
            return True
    return False


RULE = Rule(
    "PTF022",
    ("param-reassignment-detaches-optimizer",),
    "assigning a new nn.Parameter after the optimizer was built leaves the optimizer holding the old "
    "tensor: the new one is never updated; copy into the existing parameter under torch.no_grad(), or "
    "build the optimizer afterwards",
    _parameter_replaced_after_optimizer,
    nodes=ast.Assign,
)
