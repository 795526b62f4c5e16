"""What: an RNN (or an LSTM/GRU at a language-model rate, lr >= 1) trained with plain SGD, no gradient clipping.
Why: Backpropagation through time multiplies the gradient by the recurrent Jacobian once per step: near
a "cliff" its norm jumps a hundredfold, SGD steps by lr times that norm, and the loss goes to inf, then nan.
Fix: torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm) between backward() and step().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _called_name, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _values
from torch_pitfalls.lint.rules.shared.training_loop import _enclosing_loops
from torch_pitfalls.lint.walking import kept_on, walk

_SGD = ("torch.optim.SGD", "torch.optim.sgd.SGD")  # adaptive optimizers bound their steps: Adam's is about lr
_RECURRENT = frozenset(("RNN", "LSTM", "GRU", "RNNCell", "LSTMCell", "GRUCell"))
_VANILLA = frozenset(("RNN", "RNNCell"))  # no gates: the recurrent Jacobian is W_hh times tanh' at every step
# gated cells (LSTM, GRU) explode in practice at the rates of language-model recipes (Zaremba's 1.0,
# word_language_model's 20); at SGD's 0.01..0.1 they seldom do
_GATED_LR = 1.0


def _recurrent_layer(call, ctx) -> str | None:
    """ "vanilla" for nn.RNN/RNNCell, "gated" for LSTM/GRU (and their cells), else None."""
    q = ctx.qualified(call.func) or ""
    last = q.rsplit(".", 1)[-1]
    if not (q.startswith("torch.nn.") and last in _RECURRENT):
        return None
    return "vanilla" if last in _VANILLA else "gated"


def _recurrent_class(name: str, ctx, depth: int = 0) -> str | None:
    """What recurrent layer a module class of this file builds (itself or through another class of the file):
    "vanilla" where any is, "gated", or None."""
    cls = ctx.bindings.classes().get(name)
    if cls is None or depth > 3:
        return None
    return kept_on(cls, "_ptf260_recurrent", lambda c: [_builds_recurrent(c, ctx, depth)])[0]


def _builds_recurrent(cls, ctx, depth) -> str | None:
    found = set()
    for n in walk(cls):
        if isinstance(n, ast.Call):
            found.add(_recurrent_layer(n, ctx))
            if isinstance(n.func, ast.Name) and n.func.id != cls.name:
                found.add(_recurrent_class(n.func.id, ctx, depth + 1))
    return "vanilla" if "vanilla" in found else "gated" if "gated" in found else None


def _recurrent_module(node, ctx, line: int) -> str | None:
    held = ctx.held(node, line)
    if held is None or held.kind != "module":
        return None
    what = held.what or ""
    if what.startswith("torch.nn."):
        last = what.rsplit(".", 1)[-1]
        return None if last not in _RECURRENT else "vanilla" if last in _VANILLA else "gated"
    return _recurrent_class(what, ctx)


_SHORT_WINDOW = 8


def _short_windows(loop, ctx) -> bool:
    """The loop steps over windows of a literal length of a few steps (``for chunk in seq.split(4, dim=1)``,
    truncated BPTT): backpropagation runs through at most that many steps, too few to explode."""
    it = getattr(loop, "iter", None)
    if not (_method(it, "split", "chunk") or ctx.qualified(getattr(it, "func", None)) in ("torch.split",)):
        return False
    size = it.args[1] if ctx.qualified(it.func) == "torch.split" and len(it.args) > 1 else (it.args or [None])[0]
    if _method(it, "chunk"):
        return False  # chunk(n) makes n windows, of a length it does not say
    if isinstance(size, ast.Name):
        bound = _values(size.id, ctx.chain(), loop.lineno, ctx.bindings)
        size = bound[0] if bound and len(bound) == 1 else None
    return isinstance(size, ast.Constant) and type(size.value) is int and size.value <= _SHORT_WINDOW


def _sgd_rate(receiver, ctx, line: int) -> float | None:
    """The literal lr the SGD was built with (a module constant, a name bound once to one), or None."""
    built = ctx.value_of(receiver, line) if isinstance(receiver, ast.Name) else None
    lr = _arg(built, 1, "lr") if isinstance(built, ast.Call) else None
    if isinstance(lr, ast.Name):
        bound = _values(lr.id, ctx.chain(), line, ctx.bindings)
        lr = bound[0] if bound and len(bound) == 1 else None
    return float(lr.value) if isinstance(lr, ast.Constant) and type(lr.value) in (int, float) else None


def _clips(tree) -> list[ast.Call]:
    """The calls of the file that clip gradients: ``clip_grad_norm_``/``clip_grad_value_`` (or a helper named
    so), a clip handed the parameters or gradients, ``p.grad.clamp_(-c, c)``."""
    found = []
    for n in walk(tree):
        if not isinstance(n, ast.Call):
            continue
        name = _called_name(n).lower()
        grads = any(isinstance(a, ast.Attribute) and a.attr in ("grad", "parameters") for a in walk(n))
        if ("clip" in name and ("grad" in name or "norm" in name or grads)) or (name.startswith("clamp") and grads):
            found.append(n)
    return found


def _unclipped_recurrent_sgd_step(node, ctx) -> bool:
    """``optimizer.step()`` of a torch.optim.SGD, in a loop that calls backward() on a recurrent model (a
    vanilla RNN, or a gated one at lr >= 1), with no gradient clipping that runs anywhere in the file (the
    loop's first step only)."""
    if not (_method(node, "step") and not node.args and not node.keywords):
        return False
    held = ctx.held(node.func.value)
    if held is None or held.kind != "optimizer" or held.what not in _SGD:
        return False
    loop = next(iter(_enclosing_loops(node, ctx)), None)
    if loop is None:
        return False
    calls = [n for n in walk(loop) if isinstance(n, ast.Call)]
    steps = [n for n in calls if _method(n, "step") and not n.args]
    if min(steps, key=lambda n: (n.lineno, n.col_offset)) is not node:
        return False
    if not any(_method(n, "backward") for n in calls):
        return False
    if _short_windows(loop, ctx):
        return False
    kinds = {_recurrent_module(n.func, ctx, n.lineno) for n in calls}
    if "vanilla" not in kinds:
        lr = _sgd_rate(node.func.value, ctx, node.lineno) if "gated" in kinds else None
        if lr is None or lr < _GATED_LR:
            return False
    return not any(not _dead(c, ctx) for c in kept_on(ctx.module, "_ptf260_clips", _clips))


RULE = Rule(
    "PTF260",
    ("exploding-gradients-without-clipping",),
    "a recurrent network trained with plain SGD and no gradient clipping: one exploding gradient (a cliff of "
    "the loss surface) makes a step of lr times its whole norm and the loss goes to inf/nan; call "
    "torch.nn.utils.clip_grad_norm_(params, max_norm) between backward() and step()",
    _unclipped_recurrent_sgd_step,
    nodes=CALL,
    calls=("step",),
    needs=("RNN", "LSTM", "GRU"),
)
