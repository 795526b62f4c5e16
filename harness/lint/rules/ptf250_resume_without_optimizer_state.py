"""What: training resumed from a checkpoint that restores the model's weights (and the epoch) while the
stateful optimizer (Adam, AdamW, SGD with momentum...) that goes on training it never gets its state back.
Why: The first steps after the resume run with fresh moments: Adam's bias correction restarts from zero, a
momentum buffer is empty, and the loss jumps where the run was interrupted; nothing warns.
Fix: save ``optimizer.state_dict()`` in the checkpoint and ``optimizer.load_state_dict(ckpt["optimizer"])``
when resuming.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.rules.shared.resume import resumes_without


def _resume_without_optimizer(node, ctx):
    return resumes_without(node, ctx, "optimizer")


RULE = Rule(
    "PTF250",
    ("resume-without-optimizer-state",),
    "training resumes from a checkpoint that restores the model's weights (and the epoch) but not the "
    "optimizer's state: the first steps after the resume run with fresh moments/momentum and the loss jumps; "
    "save optimizer.state_dict() in the checkpoint and load it back with optimizer.load_state_dict",
    _resume_without_optimizer,
    nodes=ast.Call,
    needs=("load_state_dict",),
)
