"""What: a script that starts a process group (torch.distributed.init_process_group) trains a model it built itself
with nothing in the file that synchronises gradients: no DistributedDataParallel, FSDP, launcher wrapper or
all_reduce of gradients or parameters (one of the loss totals for a log line syncs nothing).
Why: Every rank trains its own copy on its own shard and the copies drift apart; rank 0 saves a model that saw
1/world of the data. Nothing fails.
Fix: wrap the model (model = DDP(model, device_ids=[local_rank])) before building the optimizer."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _method
from torch_pitfalls.lint.rules.shared.distributed import starts_process_group
from torch_pitfalls.lint.walking import kept_on, walk

# calls that keep the ranks' gradients (or parameters) in step: a wrapper, a sharding or launcher library's own
# preparation; any of them in the file and the rule stays quiet
SYNCING = frozenset(
    """DistributedDataParallel DDP FullyShardedDataParallel FSDP fully_shard replicate DistributedOptimizer
ZeroRedundancyOptimizer parallelize_module DistributedModelParallel broadcast_parameters PostLocalSGDOptimizer""".split()
)
# collectives: they sync the gradients only where their function reads gradients or parameters (a hand-written
# average of the gradients); an all_reduce of the loss totals for a log line syncs nothing of the model
COLLECTIVES = frozenset("all_reduce allreduce all_reduce_coalesced reduce_scatter reduce_scatter_tensor".split())
_MODEL_STATE = frozenset(("grad", "parameters", "named_parameters", "state_dict", "parameters_to_vector"))


def _syncs(tree) -> bool:
    """Anything in the file that could keep the ranks' gradients in step. (A library that hands back a
    wrapped model, ``model, opt = accelerator.prepare(model, opt)``, re-binds the name: see _built_here.)"""
    for n in walk(tree):
        if not isinstance(n, ast.Call):
            continue
        name = getattr(n.func, "attr", None) or getattr(n.func, "id", None)
        if name in SYNCING:
            return True
        if name in COLLECTIVES and _reads_model_state(_function_of(n, tree)):
            return True
    return False


def _function_of(node, tree):
    """The innermost function holding ``node`` (the module where none does)."""
    holders = [
        fn
        for fn in walk(tree)
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and any(n is node for n in walk(fn))
    ]
    return max(holders, key=lambda fn: fn.lineno, default=tree)


def _reads_model_state(scope) -> bool:
    """The scope reads a gradient or a model's parameters (``p.grad``, ``model.parameters()``,
    ``parameters_to_vector``): what a hand-written gradient average reduces."""
    return any(
        (isinstance(n, ast.Attribute) and n.attr in _MODEL_STATE) or (isinstance(n, ast.Name) and n.id in _MODEL_STATE)
        for n in walk(scope)
    )


def _model_of(optimizer_call) -> ast.Name | None:
    """The name whose ``.parameters()`` the optimizer is given (directly or through a comprehension)."""
    if not optimizer_call.args:
        return None
    for n in walk(optimizer_call.args[0]):
        if _method(n, "parameters", "named_parameters") and isinstance(n.func.value, ast.Name):
            return n.func.value
    return None


def _built_here(model: ast.Name, ctx, line: int) -> bool:
    """The model is made in this function by a constructor of torch.nn, torchvision or a module class of
    this file (moves allowed: ``Net().to(device)``), bound once: nothing re-binds it to a wrapper."""
    bindings = [b for b in ctx.bindings.scope(ctx.function).names.get(model.id, [])]
    if len(bindings) != 1 or bindings[0].how != "assign" or bindings[0].line > line:
        return False
    value = bindings[0].value
    while _method(value, "to", "cuda", "train", "float", "double", "half"):
        value = value.func.value
    if not isinstance(value, ast.Call):
        return False
    q = ctx.qualified(value.func) or ""
    if q.startswith(("torch.nn.", "torchvision.models.")):
        return True
    cls = ctx.bindings.classes().get(getattr(value.func, "id", None) or "")
    return cls is not None and ctx.bindings.is_module_class(cls)


def _steps(optimizer_call, fn, ctx) -> bool:
    """The optimizer is bound to a name and stepped in this function, after a backward pass."""
    parent = ctx.parent(optimizer_call)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    stepped = any(_method(n, "step") and getattr(n.func.value, "id", None) == name for n in walk(fn))
    return stepped and any(_method(n, "backward") for n in walk(fn))


def _unsynchronised(node, ctx) -> bool:
    q = ctx.qualified(node.func) or ""
    if not q.startswith("torch.optim.") or q.count(".") != 2 or ctx.function is None:
        return False
    model = _model_of(node)
    if model is None or not _built_here(model, ctx, node.lineno) or not _steps(node, ctx.function, ctx):
        return False
    if kept_on(ctx.module, "_ptf277_syncs", _syncs):
        return False
    return starts_process_group(ctx)


RULE = Rule(
    "PTF277",
    ("ddp-model-not-wrapped",),
    "this script starts a process group but trains a model nothing wraps in DistributedDataParallel (and no "
    "all_reduce of its gradients): each rank trains its own copy on its own shard and rank 0 saves one of them; "
    "wrap it (model = DDP(model, device_ids=[local_rank])) before building the optimizer",
    _unsynchronised,
    nodes=CALL,
    needs=("init_process_group",),
)
