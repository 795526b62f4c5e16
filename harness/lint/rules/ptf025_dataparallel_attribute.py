"""What: The model's own methods or attributes read through a DataParallel / DistributedDataParallel
wrapper.
Why: The wrapper keeps the model under .module: AttributeError on the wrapper.
Fix: call model.module.<name>.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _bound_name, _const
from torch_pitfalls.lint.rules.shared.flow import branch_side, climb
from torch_pitfalls.lint.rules.shared.modules import _construction, constructions
from torch_pitfalls.lint.walking import kept_on, walk

# what nn.Module (and DataParallel itself) answers; anything else is the wrapped model's, under .module
_MODULE_API = frozenset(
    """
add_module apply bfloat16 buffers children compile cpu cuda double eval extra_repr float forward get_buffer
get_extra_state get_parameter get_submodule half ipu load_state_dict modules mtia named_buffers named_children
named_modules named_parameters parameters register_backward_hook register_buffer register_forward_hook
register_forward_pre_hook register_full_backward_hook register_full_backward_pre_hook register_load_state_dict_post_hook
register_load_state_dict_pre_hook register_module register_parameter register_state_dict_post_hook
register_state_dict_pre_hook requires_grad_ set_extra_state set_submodule share_memory state_dict to to_empty train
type xpu zero_grad module device_ids output_device dim gather scatter replicate parallel_apply no_sync join
join_hook register_comm_hook process_group training
""".split()
)


def _dataparallel_attribute(node, ctx) -> bool:
    """``model.my_method()`` or ``model.fc`` on a DataParallel/DistributedDataParallel wrapper: the
    wrapper has only nn.Module's API; the model's own methods and layers are under ``model.module``.
    A value stored on the wrapper (``model.fc = ...``) is the wrapper's own, so only reads count."""
    if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load)) or node.attr in _MODULE_API:
        return False
    if node.attr.startswith("__") or not _bound_name(node.value) or _wrap_checked(node, ctx):
        return False
    if node.attr in kept_on(ctx.module, "_ptf025_exposed", _exposed_on_wrappers):
        return False
    if _wrapped_on_self(node.value, ctx):
        return True
    alias = ctx.value_of(node.value, node.lineno) if isinstance(node.value, ast.Name) else None
    wrapped = _wrapped_on_self(alias, ctx) or (  # model = self.model; model.backbone
        (held := ctx.held(node.value)) is not None and held.kind == "module" and held.what in _DATA_PARALLEL
    )
    # the walk of the function for an unwrapping binding only for a read that would be reported
    return (
        wrapped
        and not (alias is not None and _also_unwrapped(node.value.id, alias, ctx))
        and not _missing_on_the_model(node, ctx)
    )


def _exposed_on_wrappers(tree) -> frozenset:
    """The names the module copies from a wrapped model onto its wrapper (``model.log_prob =
    model.module.log_prob``, after wrapping it in DistributedDataParallel): read on the wrapper, they answer."""
    return frozenset(
        t.attr
        for n in walk(tree)
        if isinstance(n, ast.Assign) and isinstance(n.value, ast.Attribute)
        for t in n.targets
        if isinstance(t, ast.Attribute)
        and n.value.attr == t.attr
        and isinstance(n.value.value, ast.Attribute)
        and n.value.value.attr == "module"
    )


def _missing_on_the_model(node: ast.Attribute, ctx) -> bool:
    """The wrapped model is built from a module class of this file that has no such attribute at all (no
    method, class attribute or ``self.<name>`` anywhere in it or its bases of the file): the read fails on
    the model itself, and ``.module`` would not help (norse's ``model.voltages``, a local of forward)."""
    made = ctx.value_of(node.value, node.lineno) if isinstance(node.value, ast.Name) else None
    while isinstance(made, ast.Call) and isinstance(made.func, ast.Attribute) and made.func.attr in ("to", "cuda"):
        made = made.func.value
    if not (isinstance(made, ast.Call) and ctx.qualified(made.func) in _DATA_PARALLEL and made.args):
        return False
    built = constructions(made.args[0], ctx.chain(), made.lineno, ctx.klass, ctx)
    classes = ctx.bindings.classes()
    if not built:
        return False
    for call, _chain in built:
        klass = classes.get(getattr(call.func, "id", None) or "")
        if klass is None or _has_attribute(klass, node.attr, classes, 0):
            return False
    return True


def _has_attribute(klass, attr: str, classes, depth: int) -> bool:
    """``attr`` is defined on the class (a method, a class-level name, ``self.<attr> = ...``), or may come
    from a base this file does not show (anything but nn.Module)."""
    for base in klass.bases:
        name = getattr(base, "id", None)
        if name in classes and depth < 4:
            if _has_attribute(classes[name], attr, classes, depth + 1):
                return True
        elif not (isinstance(base, ast.Attribute) and base.attr == "Module") and name != "Module":
            return True  # a base from elsewhere may define it
    for stmt in klass.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and stmt.name == attr:
            return True
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == attr for t in targets):
            return True
    return any(
        isinstance(n, ast.Attribute)
        and n.attr == attr
        and isinstance(n.ctx, ast.Store)
        and getattr(n.value, "id", None) == "self"
        for n in walk(klass)
    ) or any(_method_call_registers(n, attr) for n in walk(klass))


def _method_call_registers(n, attr: str) -> bool:
    """``self.add_module("out", ...)``, ``self.register_buffer("out", ...)``, ``setattr(self, "out", ...)``."""
    if not isinstance(n, ast.Call) or not n.args:
        return False
    names = ("add_module", "register_module", "register_buffer", "register_parameter")
    if isinstance(n.func, ast.Attribute) and n.func.attr in names:
        return _const(n.args[0], attr)
    return getattr(n.func, "id", None) == "setattr" and len(n.args) >= 2 and _const(n.args[1], attr)


_DATA_PARALLEL = (
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.DistributedDataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
    "torch.nn.parallel.distributed.DistributedDataParallel",
)


def _wrap_checked(node: ast.Attribute, ctx) -> bool:
    """The read sits in a branch of a test that asks whether this very object is wrapped
    (``m.module.fc if hasattr(m, "module") else m.fc``, ``if isinstance(m, (DataParallel, DDP))``):
    the code reads ``.module`` where it is there and the model's own attribute where it is not."""
    wrapper = ast.dump(node.value)
    for up, child in climb(node, ctx):
        if (
            isinstance(up, (ast.If, ast.IfExp, ast.While))
            and child is not up.test
            and any(
                isinstance(n, ast.Call)
                and getattr(n.func, "id", None) in ("hasattr", "isinstance")
                and n.args
                and ast.dump(n.args[0]) == wrapper
                and (n.func.id == "isinstance" or (len(n.args) > 1 and _const(n.args[1], "module")))
                for n in walk(up.test)
            )
        ):
            return True
        if branch_side(up, child) is not None and _other_branch_unwraps(up, child, wrapper):
            return True
    return False


def _other_branch_unwraps(branching, child, wrapper: str) -> bool:
    """The other branch of the if reads ``.module`` of the same object (``if self.is_distributed:
    self.model.module.head ... else: self.model.head``): the code tells the two cases apart itself."""
    body = branching.body if isinstance(branching.body, list) else [branching.body]
    orelse = branching.orelse if isinstance(branching.orelse, list) else [branching.orelse]
    other = orelse if child in body else body
    return any(
        isinstance(n, ast.Attribute) and n.attr == "module" and ast.dump(n.value) == wrapper
        for s in other
        for n in walk(s)
    )


def _also_unwrapped(name: str, wrapper, ctx) -> bool:
    """The function also binds ``name`` to ``wrapper.module`` (``m = self.model.module if multi_gpu else
    self.model``, or the same as an if statement): the code unwraps where it wrapped."""
    unwrapped = ast.dump(ast.Attribute(wrapper, "module", ast.Load()))
    return any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Name) and t.id == name for t in n.targets)
        and any(isinstance(v, ast.Attribute) and ast.dump(v) == unwrapped for v in walk(n.value))
        for n in walk(ctx.function)
    )


def _wrapped_on_self(attr, ctx) -> bool:
    """``self.model`` where the class wraps it (``self.model = DataParallel(self.model)``): in this method,
    when its last assignment above is the wrapper; from another method, when ``__init__`` (or a method it
    calls) wraps it, since construction runs first. A wrap in some other method (``prepare_distributed()``)
    may come after this read (timm's tasks compile, reading ``.student``, then wrap)."""
    if not (isinstance(attr, ast.Attribute) and getattr(attr.value, "id", None) == "self" and ctx.klass is not None):
        return False
    assigned = ctx.bindings.self_attributes(ctx.klass).get(attr.attr, ())
    here = sorted(
        ((line, value) for method, value, line in assigned if method is ctx.function and line < attr.lineno),
        key=lambda lv: lv[0],
    )  # (ast.walk is breadth-first: not in line order)
    if here:
        values = [here[-1][1]]
    else:
        made = ctx.__dict__.setdefault("_construction", {})  # once per class, not per attribute read
        if id(ctx.klass) not in made:
            made[id(ctx.klass)] = _construction(ctx.klass)
        first = made[id(ctx.klass)]
        values = [value for method, value, _ in assigned if method is not ctx.function and method.name in first]
    return any(isinstance(v, ast.Call) and ctx.qualified(v.func) in _DATA_PARALLEL for v in values)


RULE = Rule(
    "PTF025",
    ("dataparallel-attribute",),
    "DataParallel/DistributedDataParallel wrap the model: its own methods and attributes are under "
    ".module (AttributeError on the wrapper); call model.module.<name>",
    _dataparallel_attribute,
    nodes=ast.Attribute,
    needs=("DataParallel",),
)
