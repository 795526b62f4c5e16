"""What: zero_grad() followed, in the same function, by an in-place write into .grad.
Why: Since torch 2.0 zero_grad() sets .grad to None, so the write fails.
Fix: pass set_to_none=False where the code needs zeros.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.fixes import Fix, _add_keyword
from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _kw, _method
from torch_pitfalls.lint.walking import walk


def _is_grad(node) -> bool:
    """``p.grad`` or ``p.grad.data``."""
    if getattr(node, "attr", None) == "data":
        node = node.value
    return getattr(node, "attr", None) == "grad"


def _checks_grad_none(function) -> bool:
    """``if p.grad is not None`` / ``if p.grad is None: continue`` somewhere in the function."""
    return any(
        isinstance(n, ast.Compare) and _is_grad(n.left) and any(isinstance(op, (ast.Is, ast.IsNot)) for op in n.ops)
        for n in walk(function)
    )


def _zero_grad_then_use(node, ctx) -> bool:
    """``zero_grad()`` (set_to_none left at its default, or True) and, later in the same function, an
    in-place write into ``.grad``, which is None by then; unless the function checks for None."""
    if not (_method(node, "zero_grad") and not node.args) or ctx.kind(node.func.value) not in (
        None,
        "optimizer",
        "module",
        "loss",
    ):
        return False
    set_to_none = _kw(node, "set_to_none")
    if (set_to_none is not None and not _const(set_to_none, True)) or any(k.arg is None for k in node.keywords):
        return False
    # a backward() between the zero_grad() and the write has filled .grad again: nothing is None there
    backwards = [n.lineno for n in walk(ctx.function) if _method(n, "backward") and n.lineno > node.lineno]
    writes = any(
        (
            (isinstance(n, ast.AugAssign) and _is_grad(n.target))
            or (_method(n, "add_", "mul_", "copy_", "zero_", "sub_", "div_") and _is_grad(n.func.value))
        )
        and n.lineno > node.lineno
        and not any(b < n.lineno for b in backwards)
        for n in walk(ctx.function)
    )
    return writes and not _checks_grad_none(ctx.function)


RULE = Rule(
    "PTF101",
    ("zero-grad-set-to-none",),
    "since torch 2.0 zero_grad() sets .grad to None, so writing into .grad afterwards fails; pass "
    "set_to_none=False where the code needs zeros",
    _zero_grad_then_use,
    nodes=CALL,
    upgrade=True,
    fix=Fix(
        "zero_grad() -> zero_grad(set_to_none=False) (zeros, as before torch 2.0)",
        _add_keyword(("zero_grad",), "set_to_none=False", lambda c: not c.args and not c.keywords),
    ),
    needs=("zero_grad",),
)
