"""What: parameters frozen (requires_grad = False) after the optimizer over them has stepped, while gradients
are zeroed in place (zero_grad(set_to_none=False), p.grad.zero_()) and the optimizer keeps state or decays weights.
Why: the frozen parameters keep a zero .grad, and an optimizer skips only a .grad that is None: momentum, Adam's
averages and weight decay keep moving them. A plain zero_grad() zeroed in place before torch 2.0.
Fix: set p.grad = None for every parameter frozen (or zero_grad(set_to_none=True)), or build a new optimizer.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _dead, _own_code
from torch_pitfalls.lint.rules.shared.leaves import _freeze
from torch_pitfalls.lint.walking import kept_on, walk

_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_STATEFUL = ("Adam", "AdamW", "Adamax", "NAdam", "RAdam")  # running averages: a zero gradient still steps
# where momentum and weight decay sit by position: SGD(params, lr, momentum, dampening, weight_decay)
_DECAY_KEYWORDS = {"SGD": (("momentum", 2), ("weight_decay", 4)), "RMSprop": (("momentum", 5), ("weight_decay", 4))}
_DECAY_ONLY = ("Adagrad", "Adadelta", "ASGD", "Rprop")
_LEGACY_DEFAULT = "<2.0"  # zero_grad() zeroed the gradients in place before torch 2.0 (pytorch/pytorch#92731)


def _root(expr, ctx, line, depth=0) -> str | None:
    """The name the frozen tensors (or the optimizer's parameters) come from: ``model`` for
    ``model.backbone``, for ``p`` of ``for p in model.encoder.parameters()``, for ``blk`` of ``for i, blk in
    enumerate(model.blocks)``; the name bound to a constructor or a parameter ends the walk."""
    if depth > 8:
        return None
    if isinstance(expr, (ast.Attribute, ast.Subscript)):
        return _root(expr.value, ctx, line, depth + 1)
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute):
            return _root(expr.func.value, ctx, line, depth + 1)
        if getattr(expr.func, "id", None) in ("list", "enumerate", "iter", "reversed", "tuple") and expr.args:
            return _root(expr.args[0], ctx, line, depth + 1)
        return None
    if not isinstance(expr, ast.Name):
        return None
    binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), line)
    if binding is None:
        return expr.id
    if binding.how == "iter" or (binding.how == "assign" and isinstance(binding.value, (ast.Attribute, ast.Subscript))):
        return _root(binding.value, ctx, binding.line, depth + 1)
    if (
        binding.how == "assign"
        and isinstance(binding.value, ast.Call)
        and _method(binding.value, "parameters", "children", "modules", "named_parameters")
    ):
        return _root(binding.value, ctx, binding.line, depth + 1)
    return expr.id


def _optimizers(ctx):
    """torch.optim constructions of the current function's own code: (call, class name, bound name)."""
    found = []
    for n in walk(ctx.function):
        if not isinstance(n, ast.Call):
            continue
        q = ctx.qualified(n.func) or ""
        last = q.rsplit(".", 1)[-1]
        if not (q.startswith("torch.optim.") and last[:1].isupper()) or "lr_scheduler" in q:
            continue
        if not _own_code(n, ctx) or _dead(n, ctx):
            continue
        parent = ctx.parent(n)
        name = None
        if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
            name = parent.targets[0].id
        found.append((n, last, name))
    return found


def _holds(opt: ast.Call, root: str, ctx) -> bool:
    """The optimizer is given parameters drawn from ``root`` (``root.parameters()``, ``root.head.parameters()``...)."""
    params = opt.args[0] if opt.args else _kw(opt, "params")
    if isinstance(params, ast.Name):
        params = ctx.value_of(params, opt.lineno) or params
    if params is None:
        return False
    return any(
        _method(n, "parameters", "named_parameters") and _root(n.func.value, ctx, opt.lineno) == root
        for n in walk(params)
    )


def _moves_with_zero_grad(opt: ast.Call, cls: str):
    """The optimizer steps a parameter whose gradient is zero: Adam's family always (running averages),
    SGD/RMSprop with momentum or weight decay, the others with weight decay. A variable given for
    momentum or weight decay (``args.momentum``) is taken as set: that is what it is passed for."""
    if cls in _STATEFUL:
        return True
    checks = _DECAY_KEYWORDS.get(cls) or ((("weight_decay", None),) if cls in _DECAY_ONLY else ())
    verdict = False
    for keyword, position in checks:
        value = _kw(opt, keyword)
        if value is None and position is not None and len(opt.args) > position:
            value = opt.args[position]
        if value is None:
            continue
        if isinstance(value, ast.Constant) and isinstance(value.value, (int, float)):
            if value.value:
                return True
            continue
        verdict = True  # a variable (args.momentum): a non-zero value is what it is for
    return verdict


def _steps(opt_name, call, ctx) -> bool:
    """``opt.step()``, ``scaler.step(opt)``, or the optimizer handed to a call (a training helper; not one
    of torch's, a scheduler built on it)."""
    if not isinstance(call, ast.Call) or opt_name is None:
        return False
    if _method(call, "step") and getattr(call.func.value, "id", None) == opt_name:
        return True
    if (ctx.qualified(call.func) or "").startswith("torch."):
        return False
    return any(isinstance(a, ast.Name) and a.id == opt_name for a in (*call.args, *(k.value for k in call.keywords)))


def _trained_before(freeze, opt, opt_name, ctx) -> bool:
    """The optimizer stepped before the freeze: a step above it, or a step in a loop around it (the next
    iteration freezes what the last one trained)."""
    if opt_name is None:
        return False
    for n in walk(ctx.function):
        if _steps(opt_name, n, ctx) and opt.lineno < n.lineno < freeze.lineno:
            return True
    up = ctx.parent(freeze)
    while up is not None and up is not ctx.function:
        if isinstance(up, _LOOPS) and up.lineno > opt.lineno and any(_steps(opt_name, n, ctx) for n in walk(up)):
            return True
        up = ctx.parent(up)
    return False


def _rebuilt_after(freeze, ctx, optimizers) -> bool:
    """A new optimizer is built after the freeze (or in the loop that freezes): it holds no stale state."""
    loops = []
    up = ctx.parent(freeze)
    while up is not None and up is not ctx.function:
        if isinstance(up, _LOOPS):
            loops.append(up)
        up = ctx.parent(up)
    for opt, _, _ in optimizers:
        if opt.lineno > freeze.lineno:
            return True
        if any(opt in set(walk(loop)) for loop in loops):
            return True
    return False


def _zeroes_in_place(ctx) -> bool:
    """The file clears gradients to zero tensors: ``zero_grad(set_to_none=False)``, ``p.grad.zero_()``
    (``.grad.data.zero_()``, ``.grad.fill_(0)``), or a plain ``zero_grad()`` where the package supports a
    torch before 2.0 (its declared range, or ``--torch``)."""

    def scan(tree):
        plain = False
        for n in walk(tree):
            if _method(n, "zero_grad"):
                flag = _kw(n, "set_to_none")
                if flag is not None and _const(flag, False):
                    return "zeros"
                if flag is None and not n.args and not any(k.arg is None for k in n.keywords):
                    plain = True
            if _method(n, "zero_", "fill_") and _is_grad(n.func.value):
                return "zeros"
        return "plain" if plain else ""

    how = kept_on(ctx.module, "_ptf238_zeroing", lambda tree: [scan(tree)])[0]
    if how == "zeros":
        return True
    return how == "plain" and not ctx.releases.is_every and ctx.releases.meets((_LEGACY_DEFAULT,))


def _is_grad(node) -> bool:
    if getattr(node, "attr", None) == "data":
        node = node.value
    return getattr(node, "attr", None) == "grad"


def _drops_grads(ctx) -> bool:
    """The file sets ``.grad = None`` (or deletes it): frozen tensors are taken out of the optimizer's steps."""

    def scan(tree):
        for n in walk(tree):
            if isinstance(n, ast.Assign) and _const(n.value, None) and any(_is_grad(t) for t in n.targets):
                return True
            if isinstance(n, ast.Delete) and any(_is_grad(t) for t in n.targets):
                return True
        return False

    return kept_on(ctx.module, "_ptf238_drops", lambda tree: [scan(tree)])[0]


def _frozen_but_stepped(node, ctx):
    frozen = _freeze(node)
    if frozen is None or ctx.function is None or not _own_code(node, ctx) or _dead(node, ctx):
        return False
    root = _root(frozen, ctx, node.lineno)
    if root is None:
        return False
    optimizers = _optimizers(ctx)
    held = [
        (opt, cls, name)
        for opt, cls, name in optimizers
        if opt.lineno < node.lineno and _holds(opt, root, ctx) and _trained_before(node, opt, name, ctx)
    ]
    if not held or _rebuilt_after(node, ctx, optimizers):
        return False
    if not _zeroes_in_place(ctx) or _drops_grads(ctx):
        return False
    verdicts = [_moves_with_zero_grad(opt, cls) for opt, cls, _ in held]
    if any(v is True for v in verdicts):
        return True
    return UNSURE if any(v is UNSURE for v in verdicts) else False


RULE = Rule(
    "PTF238",
    ("frozen-params-keep-moving",),
    "these parameters are frozen after the optimizer over them has stepped, while gradients are zeroed in "
    "place (zero_grad(set_to_none=False)): their .grad stays a zero tensor, so momentum, Adam's averages and "
    "weight decay keep moving them; set p.grad = None for each frozen parameter (or zero_grad(set_to_none=True)), "
    "or build a new optimizer over the parameters that still train",
    _frozen_but_stepped,
    nodes=(ast.Call, ast.Assign),
    needs=("requires_grad",),
)
