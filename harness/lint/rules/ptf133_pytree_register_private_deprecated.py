"""What: torch.utils._pytree._register_pytree_node.
Why: Deprecated since torch 2.2 (UserWarning; FutureWarning from 2.4).
Fix: call register_pytree_node, behind hasattr for torch 2.1 and older.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Edit, Fix, Refused, Source, _call_of, _ref, _rename_attr
from torch_pitfalls.lint.rules.base import REFS, Rule, _use_of


def _register_pytree(src: Source, finding) -> list[Edit]:
    ref = _ref(src, finding, "_register_pytree_node")
    if not isinstance(ref, ast.Attribute):
        raise Refused("imported by name: rename it in the import too")
    call = _call_of(src, ref)
    if len(call.args) > 3 or any(k.arg in ("to_str_fn", "maybe_from_str_fn") for k in call.keywords):
        raise Refused("to_str_fn/maybe_from_str_fn have no counterpart in register_pytree_node")
    return [_rename_attr(src, ref, "register_pytree_node")]


RULE = Rule(
    "PTF133",
    ("pytree-register-private-deprecated",),
    "torch.utils._pytree._register_pytree_node is deprecated since torch 2.2 (UserWarning; FutureWarning from "
    "2.4); call register_pytree_node, guarded by hasattr for torch 2.1 and older",
    lambda n, c: _use_of(n, c, "torch.utils._pytree._register_pytree_node"),
    nodes=REFS,
    upgrade=True,
    deliberate_warning=True,
    once_per_file=True,
    fix=Fix("_register_pytree_node -> register_pytree_node", _register_pytree),
    needs=("_register_pytree_node",),
)
