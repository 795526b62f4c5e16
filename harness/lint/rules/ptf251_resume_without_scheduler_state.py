"""What: training resumed from a checkpoint that restores the model's (and optimizer's) state and the epoch,
while the LR scheduler that drives it starts over: its state_dict is never loaded.
Why: The schedule restarts from its first step (warm-up again, a decay undone), so the resumed run trains
at learning rates the uninterrupted one never used; nothing warns.
Fix: save ``scheduler.state_dict()`` in the checkpoint and ``scheduler.load_state_dict(ckpt["scheduler"])``
when resuming.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.rules.shared.resume import resumes_without


def _resume_without_scheduler(node, ctx):
    return resumes_without(node, ctx, "scheduler")


RULE = Rule(
    "PTF251",
    ("resume-without-scheduler-state",),
    "training resumes from a checkpoint that restores the model (and optimizer) and the epoch but not the LR "
    "scheduler: the schedule restarts from its first step (warm-up again, decay undone); save "
    "scheduler.state_dict() in the checkpoint and load it back with scheduler.load_state_dict",
    _resume_without_scheduler,
    nodes=ast.Call,
    needs=("load_state_dict",),
)
