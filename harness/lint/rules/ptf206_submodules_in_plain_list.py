"""What: Layers kept in a plain list or dict on an nn.Module.
Why: They are not registered: missing from parameters() (never trained), state_dict() and
.to()/.train().
Fix: wrap them in nn.ModuleList (nn.ModuleDict).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method, _self_attr
from torch_pitfalls.lint.rules.shared.flow import _assigned, _dead, _values
from torch_pitfalls.lint.rules.shared.modules import _STATELESS, _module_method
from torch_pitfalls.lint.walking import walk

_REGISTERING = ("torch.nn.ModuleList", "torch.nn.Sequential", "torch.nn.ModuleDict")


_PARAMETERS = ("torch.nn.Parameter", "torch.nn.parameter.Parameter")


def _builds_module(expr, ctx) -> str | None:
    """The module class this expression builds (``torch.nn.Linear``, or a module class of this file),
    or None."""
    if not isinstance(expr, ast.Call):
        return None
    held = ctx.held(expr)
    if held is None or held.kind != "module":
        return None
    return held.what or ""


def _stateful(what: str, ctx, depth: int = 0) -> bool:
    """Modules of this class hold parameters or buffers: a torch.nn layer other than an activation or
    a pooling, or a class of this file that builds one (or registers one, or calls a module it was
    handed); a class this file does not define is taken to."""
    if what.startswith("torch."):
        return what.rsplit(".", 1)[-1] not in _STATELESS
    klass = ctx.bindings.classes().get(what)
    if klass is None or depth > 4:
        return True
    for base in klass.bases:
        if isinstance(base, ast.Name) and base.id in ctx.bindings.classes() and _stateful(base.id, ctx, depth + 1):
            return True
    attrs = ctx.bindings.self_attributes(klass)
    for n in walk(klass):
        if not isinstance(n, ast.Call):
            continue
        if _method(n, "register_buffer", "register_parameter", "add_module", "register_module"):
            return True
        if ctx.qualified(n.func) in _PARAMETERS:
            return True
        built = _builds_module(n, ctx)
        if built and built != what and _stateful(built, ctx, depth + 1):
            return True
        f = n.func  # self.attention(x), where self.attention was handed in: it may hold weights
        if isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == "self" and f.attr in attrs:
            if not any(isinstance(v, ast.Call) for _, v, _ in attrs[f.attr]):
                return True
    return False


def _modules_of(elts, ctx) -> bool:
    """Every element builds a module, and one of them has state (not only activations or pooling)."""
    built = [_builds_module(e, ctx) for e in elts]
    return bool(built) and all(built) and any(_stateful(b, ctx) for b in built)


def _plain_container(value, ctx, line: int) -> bool:
    """A list, tuple or dict of new modules: a display, a comprehension, or ``list(...)``/``tuple(...)``
    of a generator (the builtin, or a parameter every call of the module passes it as)."""
    if isinstance(value, (ast.List, ast.Tuple)):
        return _modules_of(value.elts, ctx)
    if isinstance(value, ast.Dict):
        return None not in value.keys and _modules_of(value.values, ctx)
    if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
        return _modules_of([value.elt], ctx)
    if isinstance(value, ast.DictComp):
        return _modules_of([value.value], ctx)
    if (
        isinstance(value, ast.Call)
        and isinstance(value.func, ast.Name)
        and len(value.args) == 1
        and isinstance(value.args[0], (ast.List, ast.Tuple, ast.ListComp, ast.GeneratorExp))
    ):
        kinds = _values(value.func.id, ctx.chain(), line, ctx.bindings)
        if kinds and all(isinstance(k, ast.Name) and k.id in ("list", "tuple") for k in kinds):
            return _plain_container(value.args[0], ctx, line)
    return False


def _appended_modules(owner: str, scope, ctx) -> bool:
    """``owner.append(nn.Linear(...))`` (or ``extend``/``+=`` of module lists) in ``scope``."""
    for n in walk(scope):
        if _method(n, "append") and ast.unparse(n.func.value) == owner and n.args:
            if _modules_of([n.args[0]], ctx):
                return True
        if _method(n, "extend") and ast.unparse(n.func.value) == owner and n.args:
            if _plain_container(n.args[0], ctx, n.lineno):
                return True
        if isinstance(n, ast.AugAssign) and ast.unparse(n.target) == owner:
            if _plain_container(n.value, ctx, n.lineno):
                return True
    return False


def _registered_later(attr: str, ctx) -> bool:
    """The class hands ``self.<attr>`` to nn.ModuleList/Sequential/ModuleDict, reassigns it, or registers
    modules by hand (``add_module``, ``register_module``, ``setattr``): the modules are registered."""
    container_base = any(ctx.qualified(b) in _REGISTERING for b in ctx.klass.bases)
    for n in walk(ctx.klass):
        if isinstance(n, ast.Call):
            if _method(n, "add_module", "register_module") or getattr(n.func, "id", None) == "setattr":
                return True
            if _registers(
                n, ctx, lambda s: (isinstance(s, ast.Attribute) and s.attr == attr) or _gathered_from(s, attr, ctx)
            ):
                return True
            if container_base and _super_init(n) and any(_self_attr(s, attr) for a in n.args for s in walk(a)):
                return True  # class MLP(nn.Sequential): super().__init__(*self.m) registers the layers
    assigned = [
        n
        for n in walk(ctx.klass)
        if isinstance(n, ast.Assign) and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
    ]
    return len(assigned) > 1


def _super_init(call) -> bool:
    """``super().__init__(...)`` (or ``super(Cls, self).__init__(...)``)."""
    return (
        _method(call, "__init__")
        and isinstance(call.func.value, ast.Call)
        and getattr(call.func.value.func, "id", None) == "super"
    )


def _registers(call, ctx, holds) -> bool:
    """``call`` is nn.ModuleList/Sequential/ModuleDict(...) with an argument holding a node ``holds`` accepts."""
    return ctx.qualified(call.func) in _REGISTERING and any(holds(s) for a in call.args for s in walk(a))


def _gathered_from(name, attr: str, ctx) -> bool:
    """``name`` (a list handed to nn.Sequential(*name)) is filled, in the function that hands it, from
    ``self.<attr>``'s elements: ``unique_list.append(self.layers[-1])``, or an append inside ``for layer in
    self.layers``. Those modules are registered through the Sequential (PINA's FeedForward)."""
    if not isinstance(name, ast.Name):
        return False
    fn = ctx.function

    def mentions(expr) -> bool:
        return any(
            isinstance(x, ast.Attribute) and x.attr == attr and getattr(x.value, "id", None) == "self"
            for x in walk(expr)
        )

    for n in walk(fn):
        if _method(n, "append", "extend") and getattr(n.func.value, "id", None) == name.id:
            if any(mentions(a) for a in n.args):
                return True
            up = ctx.parent(n)
            while up is not None and up is not fn:
                if isinstance(up, ast.For) and mentions(up.iter):
                    return True
                up = ctx.parent(up)
    return False


def _modules_in_plain_list(node, ctx) -> bool:
    """``self.blocks = [nn.Linear(4, 4) for _ in range(3)]`` in an nn.Module (a list, tuple or dict of
    new layers, a ``list(...)`` of a generator, or an empty list the class then appends layers to):
    nn.Module registers only attributes that are modules, so these layers are missing from
    ``parameters()`` (the optimizer never updates them), from ``state_dict()`` and from ``.to()``/
    ``.double()``/``.train()``. Not when the class registers them afterwards (``nn.ModuleList(self.x)``,
    ``add_module``). The fix: ``nn.ModuleList`` (``nn.ModuleDict`` for a dict)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and _module_method(ctx)):
        return False
    target = node.targets[0]
    me = ctx.function.args.args[0].arg if ctx.function.args.args else None
    if not (isinstance(target, ast.Attribute) and getattr(target.value, "id", None) == me):
        return False
    value = _assigned(node.value, ctx, node.lineno)
    if isinstance(value, ast.List) and not value.elts:  # [] then .append(module) on it
        owner = node.value.id if isinstance(node.value, ast.Name) else ast.unparse(target)
        found = _appended_modules(owner, ctx.function, ctx) or _appended_modules(ast.unparse(target), ctx.klass, ctx)
    else:
        found = _plain_container(value, ctx, node.lineno)
    return (
        found
        and not _registered_later(target.attr, ctx)
        and not _local_list_registered(node.value, ctx)
        and not _dead(node, ctx)
    )


def _local_list_registered(value, ctx) -> bool:
    """``self.nets = layers`` where the function also hands the same list to nn.Sequential/ModuleList
    (``self._model = nn.Sequential(*layers)``, robomimic's MLP): the modules are registered through it."""
    if not isinstance(value, ast.Name):
        return False
    return any(
        isinstance(n, ast.Call) and _registers(n, ctx, lambda x: isinstance(x, ast.Name) and x.id == value.id)
        for n in walk(ctx.function)
    )


RULE = Rule(
    "PTF206",
    ("submodules-in-plain-list",),
    "layers kept in a plain list (or dict) on an nn.Module are not registered: they are missing from "
    "parameters() (never trained), state_dict() and .to()/.train(); wrap them in nn.ModuleList (nn.ModuleDict)",
    _modules_in_plain_list,
    nodes=ast.Assign,
)
