"""What: a new layer assigned into a model after the model was moved or converted (model.to(device),
.cuda(), .double(), .half()), with no move after it: ``model.to(device); model.fc = nn.Linear(...)``.
Why: Module.to converts the parameters the model holds at that moment, once; a layer created later is
built on the CPU in float32, and the first forward fails on a device or dtype mismatch.
Fix: replace the layer first, then move the whole model (or build the layer on the model's device and
dtype: nn.Linear(a, b, device=device, dtype=dtype)).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments, returned_values
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const, _method
from torch_pitfalls.lint.rules.shared.flow import _before, _dead, _exclusive, _own_code, context_at, helper_calls
from torch_pitfalls.lint.rules.shared.modules import _STATELESS
from torch_pitfalls.lint.walking import walk

# the conversions that put the parameters elsewhere than a new layer's default (CPU, float32)
_MOVES = ("to", "cuda", "double", "half", "bfloat16", "xpu")
# any conversion after the replacement puts the new layer with the rest (even .cpu()/.float())
_ALIGNS = (*_MOVES, "cpu", "float", "type", "to_empty")
# calls the model may be handed without being moved
_HARMLESS_CALLS = frozenset(
    "print len isinstance type id repr str hasattr getattr setattr vars dir callable sum list".split()
)
_DEFAULTS = ("cpu", "torch.float32", "torch.float")


def _key(node) -> str | None:
    try:
        return ast.unparse(node)
    except Exception:  # noqa: BLE001 - a node unparse does not know: no key
        return None


def _target_of(node, parent):
    """(the expression assigned into, the containers it sits in from the model down, the new value)
    for ``model.fc = v``, ``model.classifier[3] = v``, ``model.head.proj = v`` or ``setattr(model, "fc", v)``."""
    if isinstance(node, ast.Assign) and len(node.targets) == 1:
        target, value = node.targets[0], node.value
        if not isinstance(target, (ast.Attribute, ast.Subscript)):
            return None
        container = target.value
    elif (
        isinstance(node, ast.Call)
        and getattr(node.func, "id", None) == "setattr"
        and len(node.args) == 3
        and isinstance(node.args[1], ast.Constant)
        and isinstance(parent, ast.Expr)
    ):
        container, value = node.args[0], node.args[2]
        target = ast.Attribute(value=container, attr=str(node.args[1].value), ctx=ast.Load())
    else:
        return None
    chain = []
    up = container
    while isinstance(up, (ast.Attribute, ast.Subscript)):
        chain.append(up)
        up = up.value
    if not isinstance(up, ast.Name):
        return None
    if up.id == "self":  # self.model.fc = ...: the model is self.model
        if not chain:
            return None  # self.fc = ...: a layer of this module, set in its own code
    else:
        chain.append(up)
    chain.reverse()  # the model first
    return target, chain, value


def _default_placement(node, ctx, line) -> bool:
    """An argument of ``.to`` that keeps a new layer's own placement: "cpu", torch.device("cpu"),
    torch.float32, or a name bound to one of those."""
    if isinstance(node, ast.Name):
        node = ctx.value_of(node, line) or node
    if _const(node, "cpu"):
        return True
    if isinstance(node, ast.Call) and ctx.qualified(node.func) == "torch.device" and node.args:
        return _const(node.args[0], "cpu")
    return ctx.qualified(node) in _DEFAULTS


def _moves(call, ctx) -> bool:
    """``m.to(device)``, ``m.cuda()``, ``m.double()``...: a conversion away from the CPU or float32."""
    if not _method(call, *_MOVES):
        return False
    if call.func.attr != "to":
        return True
    given = [*call.args, *(k.value for k in call.keywords if k.arg in (None, "device", "dtype", "tensor"))]
    return bool(given) and not all(_default_placement(a, ctx, call.lineno) for a in given)


def _move_chain(value, ctx, aligns=False) -> bool:
    """``Net().to(device)``, ``model.cuda()``: an expression that ends in a move."""
    return isinstance(value, ast.Call) and (_method(value, *_ALIGNS) if aligns else _moves(value, ctx))


def _own_nodes(ctx):
    """The calls and assignments of the current function's own code that run (once per function)."""
    cache = ctx.bindings.__dict__.setdefault("_ptf216_own", {})
    fn = ctx.function
    if id(fn) not in cache:
        cache[id(fn)] = [
            n for n in walk(fn) if isinstance(n, (ast.Call, ast.Assign)) and _own_code(n, ctx) and not _dead(n, ctx)
        ]
    return cache[id(fn)]


def _sets_on_target(expr) -> bool:
    """The expression builds the layer where it goes: a ``device=``/``dtype=`` argument or a ``.to``."""
    for n in walk(expr):
        if isinstance(n, ast.Call) and (
            any(k.arg in ("device", "dtype", None) for k in n.keywords) or _method(n, *_ALIGNS)
        ):
            return True
    return False


def _holds_parameters(call, ctx, depth=0) -> bool | None:
    """A fresh module with parameters: a torch.nn layer (not a parameter-free one, not a loss), a
    Sequential of some, a module class of this file, or a function of this file returning one.
    None where the call builds something the file does not show (an imported class)."""
    if not isinstance(call, ast.Call) or depth > 4:
        return False
    q = ctx.qualified(call.func) or ""
    if q.startswith("torch.nn."):
        last = q.rsplit(".", 1)[-1]
        if q.startswith(("torch.nn.init.", "torch.nn.utils.", "torch.nn.functional.")) or not last[:1].isupper():
            return False
        if last in _STATELESS or last.endswith("Loss") or last == "Parameter":
            return False
        if last in ("Sequential", "ModuleList"):
            items = [e for a in call.args for e in (a.elts if isinstance(a, (ast.List, ast.Tuple)) else [a])]
            return any(_holds_parameters(a, ctx, depth + 1) for a in items)
        return True
    held = ctx.held(call)
    if held is None or held.kind != "module":
        name = getattr(call.func, "id", getattr(call.func, "attr", "")) or ""
        return None if name[:1].isupper() and not q.startswith("torch.") else False
    bindings = ctx.bindings
    if isinstance(call.func, ast.Name):
        klass = bindings.classes().get(call.func.id)
        if klass is not None and held.what == call.func.id:
            return not _sets_on_target(klass)
        fn = bindings.module_function(call.func.id)
        if fn is not None:
            return not _sets_on_target(fn)
    return (held.what or "").startswith(("torchvision.models.", "timm."))


def _new_layer(value, ctx, line):
    """True where ``value`` is a module built here with parameters on the CPU in float32 (directly or
    through a name bound to one and not moved since); None where it is a call the file does not show."""
    if isinstance(value, ast.Name):
        built = ctx.value_of(value, line)
        if not isinstance(built, ast.Call):
            return False
        if any(_method(n, *_ALIGNS) and _key(n.func.value) == value.id for n in _own_nodes(ctx)):
            return False  # head = Head(); head.to(device); model.head = head
        value = built
    if not isinstance(value, ast.Call) or _sets_on_target(value):
        return False
    return _holds_parameters(value, ctx)


def _is_model(expr, ctx, line):
    held = ctx.held(expr, line)
    if held is not None:
        return held.kind == "module"
    built = ctx.value_of(expr, line) if isinstance(expr, ast.Name) else None
    while isinstance(built, ast.Call) and _method(built, *_ALIGNS, "eval", "train"):
        built = built.func.value
    if isinstance(built, ast.Call):
        q = ctx.qualified(built.func) or ""
        if q == "torch.hub.load" or (q.startswith(("transformers.", "diffusers.")) and q.endswith(".from_pretrained")):
            return True
    return UNSURE


def _handed_on(call, keys, ctx) -> bool:
    """The model is passed to a call that may move it (a trainer, accelerator.prepare, DataParallel); not to
    a function of this file that moves nothing and hands nothing on (``freeze_backbone(model)``)."""
    if getattr(call.func, "id", None) in _HARMLESS_CALLS:
        return False
    args = [*call.args, *(k.value for k in call.keywords)]
    if not any(_key(a.value if isinstance(a, ast.Starred) else a) in keys for a in args):
        return False
    fn = ctx.bindings.module_function(call.func.id) if isinstance(call.func, ast.Name) else None
    if fn is None:
        return True
    given = {param for param, value in arguments(call, fn).items() if _key(value) in keys}
    return not given or not _keeps_in_place(fn, given)


def _handed_moved(param: str, ctx) -> bool:
    """``param`` of a module function is handed a model that was already moved, at every call of the file
    (``replace_head(load_backbone(arch, device))``, where load_backbone returns ``net.to(device)``), and the
    caller neither moves what it gets back nor hands it on."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or param not in {a.arg for a in fn.args.args}:
        return False
    sites = helper_calls(fn, ctx)
    if not sites:
        return False
    for site in sites:
        caller = context_at(site, ctx)
        given = arguments(site, fn).get(param)
        if caller is None or given is None or not _moved_value(given, caller, site.lineno):
            return False
        bound = ctx.parent(site)
        keys = {_key(given), *(_key(t) for t in getattr(bound, "targets", ()))} - {None}
        if _moved_or_handed_after(site, keys, caller):
            return False  # moved again after the change, or handed to code that may move it
    return True


def _moved_or_handed_after(site, keys, caller) -> bool:
    """After ``site``, the caller's own code moves what ``keys`` name or hands it to code that may move it."""
    return any(
        isinstance(n, ast.Call)
        and n is not site
        and _before(site, n)
        and ((_method(n, *_ALIGNS) and _key(n.func.value) in keys) or _handed_on(n, keys, caller))
        for n in _own_nodes(caller)
    )


def _returned_then_moved(name: str, ctx) -> bool:
    """The function returns the model (``return model`` or ``return loaders, model, opt``) and a caller of the
    file moves what it gets back or hands it to code that may (``UncertaintyAwareTrainer(model=model)``)."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    positions = set()
    for ret in walk(fn):
        if isinstance(ret, ast.Return) and ret.value is not None:
            parts = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
            positions |= {i for i, p in enumerate(parts) if isinstance(p, ast.Name) and p.id == name}
    for site in (helper_calls(fn, ctx) or ()) if positions else ():
        caller = context_at(site, ctx)
        bound = ctx.parent(site)
        if caller is None or not isinstance(bound, ast.Assign) or len(bound.targets) != 1:
            continue
        target = bound.targets[0]
        names = target.elts if isinstance(target, ast.Tuple) else [target]
        keys = {_key(names[i]) for i in positions if i < len(names)} - {None}
        if _moved_or_handed_after(site, keys, caller):
            return True
    return False


def _moved_value(expr, ctx, line, depth: int = 0) -> bool:
    """``expr`` holds a model already moved: ``Net().to(device)``, a name bound to one, or the call of a
    module function whose every return is one."""
    if depth > 3:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return value is not None and _moved_value(value, ctx, line, depth + 1)
    if _move_chain(expr, ctx):
        return True
    fn = (
        ctx.bindings.module_function(expr.func.id)
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Name)
        else None
    )
    returns = returned_values(fn) if fn is not None else None
    inner = context_at(returns[0][0], ctx) if returns else None
    return bool(returns) and inner is not None and all(_moved_value(v, inner, at, depth + 1) for v, at in returns)


def _root_name(node) -> str | None:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _keeps_in_place(fn, params: set) -> bool:
    """A function of the file that converts none of ``params`` (the ones handed the model: ``images.to(device)``
    moves a batch, not the model) and hands none of them to a call of unknown code (calling the model itself
    is its forward): what it is handed stays where it is."""
    for n in walk(fn):
        if not isinstance(n, ast.Call):
            continue
        if _method(n, *_ALIGNS) and _root_name(n.func.value) in params:
            return False  # model.to(device), model.module.cuda(): it moves what it was handed
        if isinstance(n.func, ast.Attribute) or getattr(n.func, "id", None) in _HARMLESS_CALLS | params:
            continue  # a method of what it holds (named_parameters, requires_grad_), a builtin, its forward
        if any(
            isinstance(x, ast.Name) and x.id in params
            for a in [*n.args, *(k.value for k in n.keywords)]
            for x in walk(a)
        ):
            return False
    return True


def _layer_after_move(node, ctx):
    setattr_call = isinstance(node, ast.Call) and getattr(node.func, "id", None) == "setattr"
    found = _target_of(node, ctx.parent(node) if setattr_call else None)
    if found is None:
        return False
    target, chain, value = found
    if not isinstance(value, (ast.Call, ast.Name)):
        return False
    layer = _new_layer(value, ctx, node.lineno)
    if layer is False or not _own_code(node, ctx) or _dead(node, ctx):
        return False
    if chain[0] is not None and isinstance(chain[0], ast.Attribute) and ctx.klass is not None:
        if ctx.bindings.is_module_class(ctx.klass):
            return False  # self.backbone.fc = ... inside a module: the whole module may be moved later
    line = node.lineno
    keys = {_key(c) for c in chain}
    target_key = _key(target)
    nodes = _own_nodes(ctx)
    root = chain[0]
    bound_at = -1  # the model a plain name holds was bound here: a move of what it held before does not count
    if isinstance(root, ast.Name):
        binding, _ = ctx.bindings.lookup(root.id, ctx.chain(), line)
        bound_at = binding.line if binding is not None else -1
    moved_before = any(
        _before(n, node)
        and n.lineno >= bound_at
        and not _exclusive(n, node, ctx.function)
        and (
            (isinstance(n, ast.Call) and _moves(n, ctx) and _key(n.func.value) in keys)
            or (
                isinstance(n, ast.Assign)
                and any(_key(t) in keys for t in n.targets)
                and _move_chain(n.value, ctx)
                and n.lineno < line
            )
        )
        for n in nodes
    )
    if not moved_before and not (isinstance(root, ast.Name) and _handed_moved(root.id, ctx)):
        return False
    later = [n for n in nodes if _before(node, n) and not _exclusive(n, node, ctx.function)]
    for n in later:
        if isinstance(n, ast.Call) and _method(n, *_ALIGNS):
            receiver = _key(n.func.value) or ""
            if receiver in keys or receiver == target_key or receiver.startswith(target_key + "."):
                return False  # moved again after the change
        if isinstance(n, ast.Call) and n is not node and _handed_on(n, keys, ctx):
            return False  # handed to code that may move it
    if isinstance(root, ast.Name) and _returned_then_moved(root.id, ctx):
        return False  # the caller moves what it gets back, or hands it to code that may
    if layer is None:
        return UNSURE
    return _is_model(chain[0], ctx, line)


RULE = Rule(
    "PTF216",
    ("model-not-moved-with-new-layer",),
    "a layer assigned into the model after model.to()/.cuda()/.double() is not moved: .to converts only "
    "the layers the model has at that moment, so the new one stays on the CPU in float32 and forward "
    "fails on a device or dtype mismatch; replace the layer first, then move the whole model (or build "
    "the layer with the model's device= and dtype=)",
    _layer_after_move,
    nodes=(ast.Assign, ast.Call),
    needs=("to(", "cuda(", "half(", "double(", "bfloat16(", "xpu("),
)
