"""What: A DistributedSampler whose loader is used every epoch (here, or by the caller it is returned to)
with no set_epoch call.
Why: It shuffles with seed + epoch, and the epoch stays 0: every epoch sees the same order.
Fix: call sampler.set_epoch(epoch) at the start of each epoch.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADERS, returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to, last_names
from torch_pitfalls.lint.rules.shared.flow import _dead, _truth
from torch_pitfalls.lint.walking import walk

_DISTRIBUTED_SAMPLERS = ("torch.utils.data.DistributedSampler", "torch.utils.data.distributed.DistributedSampler")


_CALLS_SET_EPOCH = ("pytorch_lightning", "lightning", "accelerate")  # frameworks that call set_epoch themselves


def _set_epoch_anywhere(ctx) -> bool:
    """The module calls ``.set_epoch(...)`` on anything, in a branch that runs, or names it at all
    (``hasattr(sampler, "set_epoch")``, ``getattr``)."""
    found = ctx.__dict__.setdefault("_set_epoch", {})
    if "any" not in found:
        found["any"] = any(
            (isinstance(n, ast.Attribute) and n.attr == "set_epoch" and not _dead(n, ctx))
            or (isinstance(n, ast.Constant) and n.value == "set_epoch")
            for n in walk(ctx.module)
        )
    return found["any"]


def _bound_to(node, ctx) -> str | None:
    """The name a call is assigned to (also as a branch of ``x if cond else None``)."""
    up = ctx.parent(node)
    while isinstance(up, ast.IfExp):
        up = ctx.parent(up)
    if isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Name):
        return up.targets[0].id
    return None


def _loaders_of(sampler, name: str | None, ctx) -> list[ast.Call]:
    """The DataLoader calls of this function built with this sampler."""
    out = []
    for n in walk(ctx.function):
        if not _is_call_to(n, ctx, *LOADERS):
            continue
        given = _arg(n, 3, "sampler")
        if given is sampler or (name is not None and isinstance(given, ast.Name) and given.id == name):
            out.append(n)
    return out


def _returned_to_this_file(loader: ast.Call, ctx) -> bool:
    """The function returns the loader itself, alone or in a tuple (``return (DataLoader(...), n_classes)``),
    and this file calls the function: the script builds the loader to use it, and no code outside it that
    might call set_epoch is in the way. A library's builder, called nowhere here, hands it to callers who may."""
    up = ctx.parent(loader)
    if isinstance(up, ast.Tuple):
        up = ctx.parent(up)
    fn = ctx.function
    return (
        isinstance(up, ast.Return)
        and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and bool(ctx.bindings.call_sites(fn.name))
    )


def _used_each_epoch(loader: str, ctx, function=None) -> bool:
    """The loader is used inside a loop's body (iterated by an inner loop, or handed to a function that
    runs one epoch): more than one epoch draws from it."""
    return any(
        isinstance(n, (ast.For, ast.While))
        and any(isinstance(m, ast.Name) and m.id == loader for s in n.body for m in walk(s))
        for n in walk(function or ctx.function)
    )


def _returned_and_used_each_epoch(loader: str, ctx) -> bool:
    """The function hands the loader back (``return loader`` or ``return loader, n_classes``) and a function
    of this module that calls it uses what it gets epoch after epoch (``loader, n = make_loader(...)``)."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    places = set()
    for value, _line in returned_values(fn) or ():
        if isinstance(value, ast.Name) and value.id == loader:
            places.add(None)
        elif isinstance(value, ast.Tuple):
            places |= {i for i, e in enumerate(value.elts) if isinstance(e, ast.Name) and e.id == loader}
    for call, chain, _klass in ctx.bindings.call_sites(fn.name):
        up, caller = ctx.parent(call), chain[0]
        if not (isinstance(up, ast.Assign) and len(up.targets) == 1) or not isinstance(
            caller, (ast.FunctionDef, ast.AsyncFunctionDef)
        ):
            continue
        target = up.targets[0]
        for place in places:
            got = target if place is None else (target.elts[place] if isinstance(target, ast.Tuple) else None)
            if isinstance(got, ast.Name) and _used_each_epoch(got.id, ctx, caller):
                return True
    return False


def _sampler_without_set_epoch(node, ctx) -> bool:
    """A shuffling DistributedSampler whose DataLoader is iterated epoch after epoch in this function,
    in a module that never calls ``set_epoch``: the sampler seeds its permutation with
    ``seed + epoch``, and the epoch stays 0, so every epoch visits the data in the same order on every
    rank. Quiet where shuffling is off, where the module names set_epoch anywhere, and under Lightning
    or Accelerate (which call it). The fix: ``sampler.set_epoch(epoch)`` at the start of each epoch."""
    if not _is_call_to(node, ctx, *_DISTRIBUTED_SAMPLERS) or ctx.function is None:
        return False
    shuffle = _arg(node, 3, "shuffle")
    if shuffle is not None and _truth(shuffle, ctx, node.lineno) is not True:
        return False
    if any(v.split(".")[0] in _CALLS_SET_EPOCH for v in ctx.imports.values()) or _set_epoch_anywhere(ctx):
        return False
    calls = _loaders_of(node, _bound_to(node, ctx), ctx)
    loaders = [name for call in calls if (name := _bound_to(call, ctx))]
    return (
        any(_used_each_epoch(loader, ctx) or _returned_and_used_each_epoch(loader, ctx) for loader in loaders)
        or any(_returned_to_this_file(call, ctx) for call in calls)
    ) and not _dead(node, ctx)


RULE = Rule(
    "PTF207",
    ("distributed-sampler-without-set-epoch",),
    "DistributedSampler shuffles with seed + epoch, and the epoch stays 0 unless set_epoch(epoch) is called: "
    "every epoch sees the same order; call sampler.set_epoch(epoch) at the start of each epoch",
    _sampler_without_set_epoch,
    nodes=CALL,
    calls=last_names(*_DISTRIBUTED_SAMPLERS),
)
