"""What: An LR scheduler built with verbose=.
Why: Deprecated since torch 2.2 and removed in 2.7 (TypeError).
Fix: drop it, and log scheduler.get_last_lr() yourself.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Source, _drop_keyword, _one
from torch_pitfalls.lint.rules.base import CALL, Rule, _is_call_to, _kw, last_names

SCHEDULERS = tuple(
    f"torch.optim.lr_scheduler.{s}"
    for s in (
        "StepLR",
        "MultiStepLR",
        "ExponentialLR",
        "CosineAnnealingLR",
        "ReduceLROnPlateau",
        "CyclicLR",
        "OneCycleLR",
        "CosineAnnealingWarmRestarts",
        "LambdaLR",
        "MultiplicativeLR",
        "LinearLR",
        "ConstantLR",
        "PolynomialLR",
        "SequentialLR",
        "ChainedScheduler",
    )
)


def _drop_verbose(src: Source, finding) -> list[Edit]:
    call = _one(
        [c for c in src.at(finding, ast.Call) if any(k.arg == "verbose" for k in c.keywords)],
        "scheduler call with verbose=",
    )
    return [_drop_keyword(src, call, "verbose")]


RULE = Rule(
    "PTF114",
    ("lr-scheduler-verbose",),
    "the schedulers' verbose= is deprecated since torch 2.2 and removed in 2.7 (TypeError); log "
    "scheduler.get_last_lr() yourself",
    lambda n, c: _is_call_to(n, c, *SCHEDULERS) and _kw(n, "verbose") is not None,
    nodes=CALL,
    calls=last_names(*SCHEDULERS),
    upgrade=True,
    fix=Fix("drops verbose= from the scheduler", _drop_verbose),
)
