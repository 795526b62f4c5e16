"""What: nn.DataParallel(model) called with neither the model nor the wrapper ever moved to the GPU.
Why: DataParallel needs the module on device_ids[0] at each forward: with two or more GPUs a model left
on the CPU fails at the first call (module must have its parameters and buffers on device cuda:0);
one GPU and CPU-only machines hide it.
Fix: move the finished model, then wrap it (model.to(device); nn.DataParallel(model)), or move the wrapper.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.names import dotted
from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, last_names
from torch_pitfalls.lint.rules.shared.flow import _exclusive
from torch_pitfalls.lint.rules.shared.modules import _STATELESS
from torch_pitfalls.lint.walking import kept_on, walk

DATA_PARALLEL = (
    "torch.nn.DataParallel",
    "torch.nn.parallel.DataParallel",
    "torch.nn.parallel.data_parallel.DataParallel",
)
MOVES = frozenset(("to", "cuda", "to_empty", "xpu", "npu", "mps"))


def _moved_names(fn, beside=None) -> frozenset:
    """The dotted names (``model``, ``self.net``, ``model.module``) that a move (``.to``, ``.cuda``)
    is called on in ``fn``, and the names assigned a call whose chain moves (``model = Net().cuda()``); with
    ``beside`` (a node and its context), only the moves that may run where that node runs: a move in the other
    branch of an ``if`` (``if n_gpus > 1: wrap else: model.to(device)``) does not move the wrapped model."""
    found = set()
    for n in walk(fn):
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in MOVES:
            if beside is not None and _exclusive(n, beside, fn):
                continue
            base = n.func.value
            while isinstance(base, ast.Attribute) and base.attr == "module":
                base = base.value
            found.add(dotted(base))
    return frozenset(found)


def _moves_in_chain(call, ctx) -> bool:
    """The expression is moved where it is made: ``Net().cuda()``, ``Net().to(device)``, or an
    argument that carries a device (``Net(device=dev)``)."""
    node = call
    while isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        if node.func.attr in MOVES:
            return True
        node = node.func.value
    return isinstance(node, ast.Call) and any(k.arg in ("device", "device_map") for k in node.keywords)


def _built_here(expr, ctx, line: int):
    """The constructor call of a module ``expr`` holds, where it is a torch.nn / torchvision / timm
    module or a module class of this file built in this function (``Net()``, or a name assigned it
    once); None for anything else (a parameter, what a helper returns)."""
    value = ctx.value_of(expr, line) if isinstance(expr, ast.Name) else expr
    if not isinstance(value, ast.Call):
        return None
    held = ctx.held(value, line)
    if held is None or held.kind != "module" or held.what in DATA_PARALLEL:
        return None
    if not _has_parameters(value, ctx):
        return None  # nothing to broadcast: DataParallel's check passes on an empty module
    if isinstance(value.func, ast.Name) and value.func.id in ctx.bindings.classes():
        cls = ctx.bindings.classes()[value.func.id]
        if _moves_itself(cls):
            return None
        return value
    q = ctx.qualified(value.func) or ""
    if q.startswith(("torch.nn.", "torchvision.models.", "timm.")):
        return value
    return None


_CONTAINERS = ("torch.nn.Sequential", "torch.nn.ModuleList")


def _has_parameters(ctor, ctx, depth: int = 0) -> bool:
    """Whether the module a constructor builds may hold parameters or buffers: not a stateless torch.nn
    layer (ReLU, Dropout), a module class of this file without ``__init__``, or a Sequential of those."""
    if depth > 4 or not isinstance(ctor, ast.Call):
        return True
    q = ctx.qualified(ctor.func) or ""
    if q in _CONTAINERS:
        return not ctor.args or any(_has_parameters(a, ctx, depth + 1) for a in ctor.args)
    if q.startswith("torch.nn.") and q.rsplit(".", 1)[-1] in _STATELESS:
        return False
    cls = ctx.bindings.classes().get(getattr(ctor.func, "id", None) or "")
    if cls is not None:  # an nn.Module subclass with no __init__ of its own builds no parameter
        own = any(
            isinstance(b, (ast.FunctionDef, ast.Assign)) and getattr(b, "name", "__init__") == "__init__"
            for b in cls.body
        )
        return own or any(
            ctx.qualified(b) not in ("torch.nn.Module", "torch.nn.modules.module.Module") for b in cls.bases
        )
    return True


def _moves_itself(cls) -> bool:
    """A module class that moves its own parameters (``self.to(device)``, ``self.cuda()`` in a method)."""
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr in MOVES
        and getattr(n.func.value, "id", None) == "self"
        for n in walk(cls)
    )


def _assigned_to(node, ctx):
    """The target a call's value is assigned to (``model = nn.DataParallel(...)``), or None."""
    parent = ctx.parent(node)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and parent.value is node:
        return parent.targets[0]
    return None


def _called(target, fn) -> bool:
    """The wrapper is called (its forward runs) in ``fn``: ``model(x)``."""
    key = dotted(target)
    return key is not None and any(isinstance(n, ast.Call) and dotted(n.func) == key for n in walk(fn))


def _wrapped_unmoved(node, ctx) -> bool:
    if not (_is_call_to(node, ctx, *DATA_PARALLEL) and node.args) or ctx.function is None:
        return False
    if _moves_in_chain(ctx.parent(node), ctx):  # nn.DataParallel(model).cuda()
        return False
    inner = node.args[0]
    if _moves_in_chain(inner, ctx):
        return False
    built = _built_here(inner, ctx, node.lineno)
    if built is None or _moves_in_chain(built, ctx):
        return False
    target = _assigned_to(node, ctx)
    if target is None:
        return False
    moved = _moved_names(ctx.function, node)
    if dotted(target) is None or dotted(target) in moved or dotted(inner) in moved:
        return False
    return _called(target, ctx.function) or _returned_to_an_unmoving_caller(target, ctx)


def _returned_to_an_unmoving_caller(target, ctx) -> bool:
    """The function returns the wrapper (``return model``) to callers in this file, none of which moves what it
    gets (``model = prepare_model(...)`` and no ``model.to(device)`` there): the caller runs its forward."""
    fn = ctx.function
    if not isinstance(target, ast.Name) or not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    returned = [r for r in walk(fn) if isinstance(r, ast.Return) and isinstance(r.value, ast.Name)]
    if not any(r.value.id == target.id for r in returned):
        return False
    sites = ctx.bindings.call_sites(fn.name)
    if not sites:
        return False
    for call, chain, _klass in sites:
        got = _assigned_to(call, ctx)
        caller = chain[0]
        if dotted(got) is None or not isinstance(caller, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if dotted(got) in kept_on(caller, "_ptf275_moved", _moved_names):
            return False
    return True


RULE = Rule(
    "PTF275",
    ("dataparallel-to-device-first",),
    "nn.DataParallel needs the module on device_ids[0] before its forward: a model never moved to the GPU "
    "fails on a machine with two or more GPUs (module must have its parameters and buffers on device cuda:0); "
    "move it first (model.to(device), then wrap) or call .to(device) on the wrapper",
    _wrapped_unmoved,
    nodes=CALL,
    calls=last_names(*DATA_PARALLEL),
    needs=("DataParallel",),
)
