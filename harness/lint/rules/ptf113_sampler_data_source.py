"""What: super().__init__(data_source) in a Sampler subclass.
Why: Sampler.__init__ stopped taking data_source: a warning in torch 2.1, a TypeError since 2.10.
Fix: do not pass it to super().__init__().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _method


def _super_init_with_data_source(node, ctx) -> bool:
    if ctx.klass is None or not (_method(node, "__init__") and node.args):
        return False
    receiver = node.func.value
    is_super = isinstance(receiver, ast.Call) and getattr(receiver.func, "id", None) == "super"
    bases = {ctx.qualified(b) for b in ctx.klass.bases}
    samplers = {"torch.utils.data.Sampler", "torch.utils.data.sampler.Sampler"}
    return is_super and bool(bases & samplers)


RULE = Rule(
    "PTF113",
    ("sampler-data-source",),
    "Sampler.__init__ stopped taking data_source (a warning in torch 2.1, a TypeError since 2.10); do not "
    "pass it to super().__init__()",
    _super_init_with_data_source,
    nodes=CALL,
    calls=("__init__",),
    upgrade=True,
)
