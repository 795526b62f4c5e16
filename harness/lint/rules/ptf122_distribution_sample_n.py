"""What: Distribution.sample_n(n).
Why: Deprecated (FutureWarning since torch 2.4).
Fix: call sample((n,)).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source, _one, _rename_attr
from torch_pitfalls.lint.rules.base import CALL, Rule, _method, receiver_holds


def _sample_n(src: Source, finding) -> list[Edit]:
    """``d.sample_n(n)`` -> ``d.sample((n,))``."""
    call = _one([c for c in src.at(finding, ast.Call) if getattr(c.func, "attr", None) == "sample_n"], "sample_n call")
    if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
        raise Refused("sample_n takes one count here: rewrite it by hand")
    arg = call.args[0]
    return [_rename_attr(src, call.func, "sample"), Edit(src.start(arg), src.end(arg), f"({src.segment(arg)},)")]


RULE = Rule(
    "PTF122",
    ("distribution-sample-n",),
    "Distribution.sample_n(n) is deprecated (FutureWarning since torch 2.4); call sample((n,))",
    lambda n, c: _method(n, "sample_n") and receiver_holds(n, c, "distribution"),
    nodes=CALL,
    calls=("sample_n",),
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix(".sample_n(n) -> .sample((n,))", _sample_n),
)
