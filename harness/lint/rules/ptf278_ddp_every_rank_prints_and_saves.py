"""What: torch.save(...) to one path in a script that starts a process group, on every rank: no test of the rank
around it (``if rank == 0:``) nor around the calls of the function that holds it.
Why: The script runs once per process: every rank writes the same file at the same moment (a torn or interleaved
checkpoint), and with it prints and tests on its own shard.
Fix: save (print, evaluate on the whole set) under ``if dist.get_rank() == 0:``, then ``dist.barrier()``."""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule
from torch_pitfalls.lint.rules.shared.distributed import asks_rank, on_one_rank, starts_process_group

SAVES = ("torch.save", "torch.serialization.save")


def _every_rank_saves(node, ctx) -> bool:
    if ctx.qualified(node.func) not in SAVES or ctx.function is None or len(node.args) < 2:
        return False
    if asks_rank(node.args[1]) or asks_rank(_opened(node.args[1], node, ctx)):
        return False  # a file of its own per rank: f"ckpt-rank{rank}.pt", or a file opened at such a path
    return starts_process_group(ctx) and not on_one_rank(node, ctx)


def _opened(target, node, ctx):
    """What ``with open(path, "wb") as f`` (or fsspec.open, ...) opened, for a save to ``f``: the with item's
    expression around the save; ``target`` itself otherwise."""
    if not isinstance(target, ast.Name):
        return target
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.With, ast.AsyncWith)):
            for item in up.items:
                if isinstance(item.optional_vars, ast.Name) and item.optional_vars.id == target.id:
                    return item.context_expr
        up = ctx.parent(up)
    return target


RULE = Rule(
    "PTF278",
    ("ddp-every-rank-prints-and-saves",),
    "every rank of this distributed script runs this torch.save to the same path: the processes write one file "
    "at the same moment (and print and test on their own shards); save under `if dist.get_rank() == 0:`, then "
    "dist.barrier()",
    _every_rank_saves,
    nodes=CALL,
    calls=("save",),
    needs=("init_process_group",),
)
