"""What: torch.optim.Adam given a decoupled-decay sized weight_decay (above 0.01: AdamW's 0.05, 0.1).
Why: Adam's weight_decay is an L2 term added to the gradient, then rescaled by Adam's second moment:
weights with large gradients barely decay and the others shrink by about lr per step, whatever the
coefficient; the run does not match a recipe that meant "AdamW, weight decay 0.1".
Fix: torch.optim.AdamW(params, lr=..., weight_decay=...) for decoupled decay (Adam only for a deliberate L2).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, _const, _kw
from torch_pitfalls.lint.rules.shared.flow import _values
from torch_pitfalls.lint.rules.shared.options import _numbers
from torch_pitfalls.lint.walking import kept_on, walk

_ADAM = ("torch.optim.Adam", "torch.optim.adam.Adam")
# Adam's L2 coefficient is usually 1e-6..5e-3 (GNN, recsys and RL recipes: 5e-4, DDPG's critic 1e-2);
# decoupled decay is 0.01..0.3 (AdamW's default 0.01, ViT's 0.05, GPT's 0.1). Above 0.01 is the
# decoupled range; 0.01 itself is both (reported only with --preview).
_DECOUPLED_ABOVE = 0.01


def _is_adam(func, ctx, line: int) -> bool:
    """The call builds torch.optim.Adam: by its name, or through a name every call of the module binds
    to it (``train(torch.optim.Adam, ...)`` ... ``optimizer_class(params, ...)``)."""
    if ctx.qualified(func) in _ADAM:
        return True
    if isinstance(func, ast.Name):
        held = _values(func.id, ctx.chain(), line, ctx.bindings)
        return bool(held) and all(ctx.qualified(v) in _ADAM for v in held)
    return False


def _knows_adamw(tree) -> list[bool]:
    """The file names AdamW (a class or an ``"adamw"`` option): it picks between Adam and AdamW on purpose."""
    return [
        any(
            (isinstance(n, ast.Name) and n.id == "AdamW")
            or (isinstance(n, ast.Attribute) and n.attr == "AdamW")
            or (isinstance(n, ast.Constant) and isinstance(n.value, str) and "adamw" in n.value.lower())
            for n in walk(tree)
        )
    ]


def _group_decays(params, ctx, line: int) -> list | None:
    """The ``"weight_decay"`` of each parameter group given as a list of dict literals (GPT's decay and
    no-decay groups), or None."""
    if isinstance(params, ast.Name):
        bound = _values(params.id, ctx.chain(), line, ctx.bindings)
        params = bound[0] if bound and len(bound) == 1 else None
    if not isinstance(params, ast.List) or not params.elts or not all(isinstance(g, ast.Dict) for g in params.elts):
        return None
    out = []
    for group in params.elts:
        for k, v in zip(group.keys, group.values):
            if isinstance(k, ast.Constant) and k.value == "weight_decay":
                found = _numbers(v, ctx, line)
                if found is None:
                    return None
                out += found
    return out or None


def _adam_with_decoupled_sized_decay(node, ctx):
    decay = _arg(node, 4, "weight_decay")  # Adam(params, lr, betas, eps, weight_decay)
    params = _arg(node, 0, "params")
    if decay is None and not isinstance(params, (ast.List, ast.Name)):
        return False
    decoupled = _kw(node, "decoupled_weight_decay")  # torch 2.6+: Adam(decoupled_weight_decay=True) is AdamW
    if decoupled is not None and not _const(decoupled, False):
        return False
    if not _is_adam(node.func, ctx, node.lineno):
        return False
    values = _numbers(decay, ctx, node.lineno) if decay is not None else _group_decays(params, ctx, node.lineno)
    if not values or kept_on(ctx.module, "_ptf258_adamw", _knows_adamw)[0]:
        return False
    if max(values) > _DECOUPLED_ABOVE:
        return True
    return UNSURE if max(values) >= _DECOUPLED_ABOVE else False


RULE = Rule(
    "PTF258",
    ("adam-weight-decay-is-not-adamw",),
    "Adam's weight_decay is an L2 term that Adam's adaptive step rescales, not decoupled weight decay: "
    "a value this large is AdamW's; use torch.optim.AdamW (keep Adam only for a deliberate L2 penalty)",
    _adam_with_decoupled_sized_decay,
    nodes=CALL,
    needs=("Adam",),
)
