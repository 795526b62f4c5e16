"""What: A tensor sliced with a negative step (t[::-1]).
Why: Tensors do not support a negative slice step: ValueError.
Fix: use t.flip(dim).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule

_RNNS = ("torch.nn.GRU", "torch.nn.LSTM", "torch.nn.RNN")


def _negative_step(node, ctx) -> bool:
    """``t[::-1]`` on a tensor: torch refuses negative slice steps (ValueError)."""
    if not isinstance(node, ast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, ast.Tuple) else [node.slice]
    negative = any(
        isinstance(p, ast.Slice) and isinstance(p.step, ast.UnaryOp) and isinstance(p.step.op, ast.USub) for p in parts
    )
    if not negative:
        return False
    held = ctx.held(node.value)
    if held is not None and held.kind == "tensor" and held.what != "output":  # a module's output may be a tuple
        return True
    return _rnn_output(node.value, ctx) or _fed_to_a_torch_layer(node, ctx)


def _rnn_output(value, ctx) -> bool:
    """``out, state = self.rnn(x)``: the first of what a torch GRU, LSTM or RNN returns is its output tensor."""
    if not isinstance(value, ast.Name) or ctx.function is None:
        return False
    binding, _ = ctx.bindings.lookup(value.id, ctx.chain(), value.lineno)
    if binding is None or binding.how != "item" or binding.index != 0 or not isinstance(binding.value, ast.Call):
        return False
    held = ctx.held(binding.value.func)
    return held is not None and held.kind == "module" and held.what in _RNNS


def _fed_to_a_torch_layer(node, ctx) -> bool:
    """The slice is handed straight to a torch layer (``self.rnn(x[:, ::-1])`` with ``self.rnn = nn.GRU(...)``),
    whose input is a tensor: a list or an array there would fail anyway."""
    call = ctx.parent(node)
    if not (isinstance(call, ast.Call) and call.args and call.args[0] is node) or ctx.function is None:
        return False
    held = ctx.held(call.func)
    what = held.what or "" if held is not None else ""
    return held is not None and held.kind == "module" and what.startswith("torch.nn.") and what != "torch.nn.Sequential"


RULE = Rule(
    "PTF019",
    ("negative-step-slicing",),
    "tensors do not support a negative slice step (ValueError); use t.flip(dim)",
    _negative_step,
    nodes=ast.Subscript,
)
