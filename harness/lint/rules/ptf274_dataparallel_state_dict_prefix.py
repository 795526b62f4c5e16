"""What: a DataParallel / DistributedDataParallel wrapper's state dict saved, or loaded into the plain model.
Why: The wrapper holds the model as ``module``: every key starts with ``module.`` and the checkpoint
does not load into the plain model (Missing / Unexpected key(s) in state_dict: "module.weight").
Fix: save ``model.module.state_dict()``; strip a prefix already written before loading
(torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _called_name, _is_call_to, _method
from torch_pitfalls.lint.walking import kept_on, walk

WRAPPERS = frozenset(
    (
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    )
)
SAVES = ("torch.save", "torch.serialization.save")


def _wrapper(node, ctx) -> bool:
    """``node`` holds a DataParallel / DistributedDataParallel module, by its construction."""
    held = ctx.held(node)
    return held is not None and held.kind == "module" and held.what in WRAPPERS


def _plain_module(node, ctx) -> bool:
    """``node`` holds a module the bindings know, built by something other than a wrapper."""
    held = ctx.held(node)
    return held is not None and held.kind == "module" and held.what is not None and held.what not in WRAPPERS


def _wrapper_state_dict(expr, ctx, line: int, depth: int = 0):
    """The ``W.state_dict()`` call of a wrapper ``W`` that ``expr`` is (through names it was assigned,
    and the values of a dict literal: ``{"model": W.state_dict(), "epoch": e}``), or None."""
    if depth > 4 or expr is None:
        return None
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return _wrapper_state_dict(value, ctx, getattr(value, "lineno", line), depth + 1) if value is not None else None
    if isinstance(expr, ast.Dict):
        return next(
            (f for f in (_wrapper_state_dict(v, ctx, line, depth + 1) for v in expr.values) if f is not None), None
        )
    if _method(expr, "state_dict") and not expr.args and _wrapper(expr.func.value, ctx):
        return expr
    return None


_RESTORE_WORDS = ("load", "restore", "resume", "checkpoint")


def _file_facts(tree) -> tuple[bool, list, list]:
    """(the file strips or adds the ``module.`` prefix somewhere: a ``"module."`` string or
    consume_prefix_in_state_dict_if_present; the ``load_state_dict`` calls of the file; the calls of a
    helper named for restoring a checkpoint, ``restart_from_checkpoint(path, state_dict=model)``)."""
    strips, loads, restores = False, [], []
    for n in walk(tree):
        name = _called_name(n).lower() if isinstance(n, ast.Call) else ""
        if name != "load_state_dict" and any(w in name for w in _RESTORE_WORDS):
            restores.append(n)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and n.value.startswith("module"):
            if n.value.rstrip(".") == "module" or n.value.startswith("module."):
                strips = True
        elif isinstance(n, (ast.Name, ast.Attribute)) and getattr(n, "id", getattr(n, "attr", "")) in (
            "consume_prefix_in_state_dict_if_present",
        ):
            strips = True
        elif _method(n, "load_state_dict"):
            loads.append(n)
    return strips, loads, restores


def _facts(ctx):
    return kept_on(ctx.module, "_ptf274_facts", _file_facts)


def _saved_from_wrapper(node, ctx) -> bool:
    """``torch.save(W.state_dict(), path)`` (or of a dict holding it), ``W`` a wrapper; quiet where the
    file handles the prefix or loads its checkpoints back into a wrapper."""
    if not (_is_call_to(node, ctx, *SAVES) and node.args):
        return False
    saved = _wrapper_state_dict(node.args[0], ctx, node.lineno)
    if saved is None:
        return False
    strips, loads, restores = _facts(ctx)
    if strips:
        return False
    owner = ast.dump(saved.func.value)  # ``model``, ``self.model``: the file loads into it again
    if any(ast.dump(a) == owner for c in restores for a in [*c.args, *(k.value for k in c.keywords)]):
        return False  # the wrapper itself is handed to a helper that restores the checkpoint into it
    return not any(ast.dump(c.func.value) == owner or _wrapper(c.func.value, ctx) for c in loads)


def _loaded_into_plain(node, ctx) -> bool:
    """``plain.load_state_dict(sd)`` where ``sd`` is a wrapper's ``state_dict()`` and ``plain`` a module
    the file builds unwrapped."""
    if not (_method(node, "load_state_dict") and node.args):
        return False
    if _wrapper_state_dict(node.args[0], ctx, node.lineno) is None:
        return False
    return _plain_module(node.func.value, ctx) and not _facts(ctx)[0]


def _prefixed_checkpoint(node, ctx) -> bool:
    return _saved_from_wrapper(node, ctx) or _loaded_into_plain(node, ctx)


RULE = Rule(
    "PTF274",
    ("dataparallel-state-dict-prefix",),
    "the state dict of a DataParallel/DistributedDataParallel wrapper has every key prefixed with 'module.' and "
    "does not load into the plain model (Missing/Unexpected key(s)); save model.module.state_dict(), or strip "
    "the prefix (consume_prefix_in_state_dict_if_present) before loading",
    _prefixed_checkpoint,
    nodes=CALL,
    needs=("Parallel", "DDP"),
)
