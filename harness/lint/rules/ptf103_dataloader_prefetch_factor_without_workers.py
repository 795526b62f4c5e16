"""What: DataLoader(prefetch_factor=...) with num_workers=0 (left out, or an option that defaults to 0).
Why: Since torch 2.0 that combination raises ValueError.
Fix: pass prefetch_factor only when num_workers > 0.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _is_call_to, _kw
from torch_pitfalls.lint.rules.shared.options import default_constant, option_default


def _may_be_none(value) -> bool:
    """``None``, or a conditional with a ``None`` branch."""
    if isinstance(value, ast.IfExp):
        return _may_be_none(value.body) or _may_be_none(value.orelse)
    return _const(value, None)


def _prefetch_without_workers(node, ctx) -> bool:
    if not (
        _is_call_to(node, ctx, "torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
        and _kw(node, "prefetch_factor") is not None
    ):
        return False
    if _may_be_none(_kw(node, "prefetch_factor")):
        return False  # prefetch_factor=4 if workers > 0 else None: None (its default) where there are none
    workers = _kw(node, "num_workers")
    if workers is None:
        return True
    if _const(default_constant(workers, ctx, line=node.lineno), 0):
        return True  # cfg["workers"] with CFG = {"workers": int(os.environ.get("WORKERS", "0"))}
    value = ctx.resolve(workers, node.lineno)
    if isinstance(value, ast.Name) and ctx.function is not None:
        # a parameter: 0 when every call site in the module passes 0 (or leaves its default of 0)
        passed = ctx.bindings.passed_values(value.id, ctx.chain(), node.lineno)
        return bool(passed) and all(_const(v, 0) for v in passed)
    if isinstance(value, ast.Attribute):  # num_workers=args.workers: 0 when the script runs with its defaults
        return _const(option_default(value, ctx), 0)
    return _const(value, 0)


RULE = Rule(
    "PTF103",
    ("dataloader-prefetch-factor-without-workers",),
    "since torch 2.0 DataLoader raises ValueError when prefetch_factor is given with num_workers=0; pass it "
    "only when num_workers > 0",
    _prefetch_without_workers,
    nodes=CALL,
    calls=("DataLoader",),
    upgrade=True,
)
