"""What: torch.cross (or a.cross(b)) without dim.
Why: It picks the first dimension of size 3, and warns since torch 2.2.
Fix: pass dim (or use torch.linalg.cross).
"""

from __future__ import annotations

from torch_pitfalls.lint.fixes import Fix, _add_keyword
from torch_pitfalls.lint.rules.base import CALL, Rule, _has_kw, _is_call_to, _method, receiver_holds


def _cross_without_dim(node, ctx) -> bool:
    if _is_call_to(node, ctx, "torch.cross"):
        return len(node.args) < 3 and not _has_kw(node, "dim")
    if not (
        _method(node, "cross") and ctx.qualified(node.func) is None and len(node.args) == 1 and not _has_kw(node, "dim")
    ):
        return False
    # a.cross(b) on a tensor; on an object not known to be one (``self.cross(x)``, a layer named so), UNSURE
    return receiver_holds(node, ctx, "tensor")


RULE = Rule(
    "PTF115",
    ("cross-without-dim",),
    "torch.cross without dim picks the first dimension of size 3 and warns since torch 2.2; pass dim "
    "(or use torch.linalg.cross)",
    _cross_without_dim,
    nodes=CALL,
    calls=("cross",),
    upgrade=True,
    deliberate_warning=True,
    fix=Fix(
        "cross(a, b) -> cross(a, b, dim=-1)",
        _add_keyword(("cross",), "dim=-1", lambda c: not any(k.arg == "dim" for k in c.keywords)),
    ),
)
