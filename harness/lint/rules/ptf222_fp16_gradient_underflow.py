"""What: backward() on an unscaled loss in float16 training (CUDA autocast's default dtype, or .half() weights).
Why: float16's smallest subnormal is 2^-24 (~6e-8): smaller gradients are rounded to exactly 0 and their
weights stop learning, with no error and a normal-looking loss.
Fix: scale the loss: scaler = torch.amp.GradScaler("cuda"); scaler.scale(loss).backward(); scaler.step(opt);
scaler.update() (with float32 weights under autocast), or train in bfloat16.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule, _const, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _own_code
from torch_pitfalls.lint.rules.shared.options import _item, default_constant, default_truth
from torch_pitfalls.lint.walking import walk

_AUTOCAST = (
    "torch.autocast",
    "torch.amp.autocast",
    "torch.amp.autocast_mode.autocast",
    "torch.cuda.amp.autocast",
    "torch.cuda.amp.autocast_mode.autocast",
)
_FP16 = ("torch.float16", "torch.half")
_GRAD_OFF = ("torch.no_grad", "torch.inference_mode", "torch.autograd.no_grad")
# a loss scale of some kind: torch's GradScaler, apex's amp.scale_loss, a framework's own scaler
_SCALER_WORDS = ("scaler", "scale_loss", "loss_scale", "lossscale", "gradscaler")


def _constant(node, ctx):
    """A literal, or what a name was assigned (one step)."""
    if isinstance(node, ast.Name):
        node = ctx.value_of(node, node.lineno) or node
    return node.value if isinstance(node, ast.Constant) else None


def _fp16_autocast(call, ctx) -> bool:
    """``torch.autocast("cuda")``, ``torch.cuda.amp.autocast()``, or any autocast with dtype=torch.float16
    (not bfloat16, not CPU's default, not ``enabled=False``)."""
    if not isinstance(call, ast.Call):
        return False
    q = ctx.qualified(call.func)
    if q not in _AUTOCAST:
        return False
    enabled = _kw(call, "enabled")
    if enabled is not None and _const(enabled, False):
        return False
    dtype = _kw(call, "dtype")
    if dtype is not None:
        return ctx.qualified(dtype) in _FP16
    if q.startswith("torch.cuda."):
        return True
    device = call.args[0] if call.args else _kw(call, "device_type")
    value = _constant(device, ctx) if device is not None else None
    return isinstance(value, str) and value.startswith("cuda")


def _scaled_somewhere(ctx) -> bool:
    """The file scales a loss somewhere (a GradScaler, apex's scale_loss, a loss-scale object): the
    training may go through it; which backward does is not told."""
    cached = ctx.bindings.__dict__.get("_ptf222_scaled")
    if cached is None:
        cached = False
        for n in walk(ctx.module):
            name = n.id if isinstance(n, ast.Name) else n.attr if isinstance(n, ast.Attribute) else None
            if name is None and isinstance(n, ast.alias):
                name = n.asname or n.name
            if name is None and isinstance(n, ast.arg):
                name = n.arg
            if name and any(w in name.lower().replace("_", "") or w in name.lower() for w in _SCALER_WORDS):
                cached = True
                break
            if _method(n, "scale"):
                cached = True
                break
        ctx.bindings.__dict__["_ptf222_scaled"] = cached
    return cached


def _under_autocast(node, ctx) -> bool:
    """``node`` runs inside, or after (in the same function), a ``with`` of a float16 autocast."""
    for n in walk(ctx.function):
        if (
            isinstance(n, (ast.With, ast.AsyncWith))
            and n.lineno <= node.lineno
            and any(_fp16_autocast(i.context_expr, ctx) for i in n.items)
            and _own_code(n, ctx)
        ):
            return True
    return False


def _grad_off(node, ctx) -> bool:
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, (ast.With, ast.AsyncWith)) and any(
            isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in _GRAD_OFF for i in up.items
        ):
            return True
        up = ctx.parent(up)
    return False


def _to_fp16(call, ctx) -> bool:
    """``.half()`` or ``.to(torch.float16)`` / ``.to(dtype=torch.half)``, the dtype also through a name and an
    option's default (``dtype = torch.float16 if args.precision == "fp16" else torch.float32``)."""
    if _method(call, "half") and not call.args:
        return True
    return _method(call, "to") and any(
        _dtype(a, ctx, call.lineno) in _FP16
        for a in [*call.args, *(k.value for k in call.keywords if k.arg == "dtype")]
    )


def _dtype(expr, ctx, line: int, depth: int = 0) -> str | None:
    """The qualified dtype an expression holds at ``line``: itself, a name's value, or the branch of a
    conditional the options' defaults take."""
    if depth > 4:
        return None
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return _dtype(value, ctx, line, depth + 1) if value is not None else ctx.qualified(expr)
    if isinstance(expr, ast.IfExp):
        taken = default_truth(expr.test, ctx, ctx.chain(), line)
        return None if taken is None else _dtype(expr.body if taken else expr.orelse, ctx, line, depth + 1)
    if isinstance(expr, ast.Subscript):  # DTYPES[args.precision]: the entry the option's default picks
        table = ctx.bindings.value_of(expr.value.id, ctx.chain(), line) if isinstance(expr.value, ast.Name) else None
        key = default_constant(expr.slice, ctx) if isinstance(table, ast.Dict) else None
        return _dtype(_item(table, key.value), ctx, line, depth + 1) if key is not None else None
    return ctx.qualified(expr) if expr is not None else None


def _halved(name: ast.Name, ctx) -> bool:
    """The module ``name`` calls was converted whole to float16: built with ``.half()`` (``Net().cuda().half()``)
    or converted by a statement of its own scope (``model.half()``) between that binding and the call."""
    binding, where = ctx.bindings.lookup(name.id, ctx.chain(), name.lineno)
    if binding is None or binding.how != "assign":
        return False
    value = binding.value
    while isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute):
        if _to_fp16(value, ctx):
            return True
        value = value.func.value
    scope = where[0]
    body = scope.body if isinstance(scope.body, list) else []
    todo = list(body)
    while todo:
        stmt = todo.pop()
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        if (
            isinstance(stmt, ast.Expr)
            and _to_fp16(stmt.value, ctx)
            and isinstance(stmt.value.func.value, ast.Name)
            and stmt.value.func.value.id == name.id
            and binding.line < stmt.lineno
            and (where[0] is not ctx.function or stmt.lineno < name.lineno)
        ):
            return True
        for field in ("body", "orelse", "finalbody", "handlers"):
            todo.extend(c for c in getattr(stmt, field, None) or () if isinstance(c, (ast.stmt, ast.excepthandler)))
    return False


def _frozen_somewhere(ctx) -> bool:
    return any(
        (_method(n, "requires_grad_") and n.args and not _const(n.args[0], True))
        or (
            isinstance(n, ast.Assign)
            and any(isinstance(t, ast.Attribute) and t.attr == "requires_grad" for t in n.targets)
        )
        for n in walk(ctx.module)
    )


def _trains_halved_module(node, ctx) -> bool:
    """The function calls a module the file converts whole to float16 (with grad on, none frozen)."""
    if _frozen_somewhere(ctx):
        return False
    for n in walk(ctx.function):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Name)
            and n.lineno <= node.lineno
            and _own_code(n, ctx)
            and not _grad_off(n, ctx)
            and ctx.kind(n.func, n.lineno) == "module"
            and _halved(n.func, ctx)
        ):
            return True
    return False


def _fp16_leaves(node, ctx) -> bool:
    """The function makes float16 tensors that require grad: ``torch.tensor(..., dtype=torch.float16,
    requires_grad=True)``, or passes torch.float16 to a function of this module that makes them with the
    dtype it is given."""
    for n in walk(ctx.function):
        if not isinstance(n, ast.Call) or n.lineno > node.lineno or not _own_code(n, ctx):
            continue
        if _fp16_factory(n, ctx, None):
            return True
        fn = ctx.bindings._local_function(n, ctx.chain(), n.lineno)
        if fn is None:
            continue
        a = fn.args
        names = [x.arg for x in (*a.posonlyargs, *a.args)]
        passed = dict(zip(names, n.args))
        passed.update({k.arg: k.value for k in n.keywords if k.arg})
        for param, value in passed.items():
            if ctx.qualified(value) in _FP16 and any(
                isinstance(m, ast.Call) and _fp16_factory(m, ctx, param) for m in walk(fn)
            ):
                return True
    return False


def _fp16_factory(call, ctx, param) -> bool:
    """A tensor factory with ``requires_grad=True`` and dtype torch.float16 (or the parameter ``param``)."""
    q = ctx.qualified(call.func) or ""
    if not (q.startswith("torch.") and q.count(".") == 1):
        return False
    rg, dtype = _kw(call, "requires_grad"), _kw(call, "dtype")
    if rg is None or not _const(rg, True) or dtype is None:
        return False
    return ctx.qualified(dtype) in _FP16 or (param is not None and isinstance(dtype, ast.Name) and dtype.id == param)


def _unscaled_fp16_backward(node, ctx) -> bool:
    if not (_method(node, "backward") and not node.args and ctx.function is not ctx.module):
        return False
    loss = node.func.value
    if isinstance(loss, ast.BinOp) and isinstance(loss.op, ast.Mult):
        return False  # (loss * scale).backward(): scaled by hand
    if isinstance(loss, ast.Call) or not isinstance(loss, (ast.Name, ast.Attribute, ast.Subscript, ast.BinOp)):
        return False  # scaler.scale(loss).backward(), a loss built in place: not read
    if _grad_off(node, ctx) or _scaled_somewhere(ctx):
        return False
    if ctx.function.name.startswith("test") or "test" in ctx.function.name.lower().split("_"):
        return False  # a test's one step trains nothing: the updates lost over a training run are the harm
    return _under_autocast(node, ctx) or _trains_halved_module(node, ctx) or _fp16_leaves(node, ctx)


RULE = Rule(
    "PTF222",
    ("fp16-gradient-underflow",),
    "backward() on an unscaled loss in float16 (autocast on CUDA defaults to float16; .half() weights): "
    "gradients below 2^-24 (~6e-8) are rounded to exactly 0 and their weights stop learning, silently; "
    'scale the loss: scaler = torch.amp.GradScaler("cuda"); scaler.scale(loss).backward(); '
    "scaler.step(optimizer); scaler.update() (float32 weights under autocast), or use bfloat16",
    _unscaled_fp16_backward,
    nodes=CALL,
    calls=("backward",),
    needs=("autocast", "half", "float16"),
)
