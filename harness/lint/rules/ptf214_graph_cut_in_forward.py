"""What: a module's forward (or a method it calls) passes activations through a @torch.no_grad() function.
Why: Nothing the helper computes is recorded, so every layer before the call gets no gradient and
never trains; no error, no warning.
Fix: drop the decorator (or write a differentiable copy) for code that runs inside forward.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, Rule
from torch_pitfalls.lint.rules.shared.flow import (
    GRAD_OFF_QUALIFIED,
    _decorated_grad_off,
    _site_args,
    context_at,
    helper_calls,
)
from torch_pitfalls.lint.rules.shared.modules import _module_method
from torch_pitfalls.lint.walking import kept_on, walk


def _grad_off(fn, ctx) -> bool:
    """``@torch.no_grad()`` (or ``inference_mode``) on the function, or its whole body in ``with torch.no_grad():``."""
    if _decorated_grad_off(fn, ctx):
        return True
    body = [s for s in fn.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]  # docstring
    return (
        len(body) == 1
        and isinstance(body[0], ast.With)
        and any(
            isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in GRAD_OFF_QUALIFIED
            for i in body[0].items
        )
    )


def _functions(name: str, chain, line: int, ctx, depth: int = 0) -> list | None:
    """The module-level functions a name may hold at ``line``: the function itself, or for a
    parameter what the module's own calls pass (``Net(norm)`` ... ``setup(device, standardize)``);
    None where something else may be passed."""
    bindings = ctx.bindings
    binding, where = bindings.lookup(name, chain, line)
    fn = bindings.module_function(name)
    if fn is not None and (binding is None or binding.value is fn):
        return [fn]
    if binding is None or depth > 6:
        return None
    if binding.how == "assign" and isinstance(binding.value, ast.Name):
        return _functions(binding.value.id, where, binding.line, ctx, depth + 1)
    if binding.how != "param":
        return None
    sites = _site_args(where[0], name, bindings)
    if not sites:
        return None
    out = []
    for value, caller, at in sites:
        found = _functions(value.id, caller, at, ctx, depth + 1) if isinstance(value, ast.Name) else None
        if found is None:
            return None
        out += found
    return out


def _called_functions(func, ctx) -> list | None:
    """What a call in a method calls, where it is a function of this module: by name, or through a
    ``self.`` attribute set from one (``self.norm = norm`` in ``__init__``)."""
    if isinstance(func, ast.Name):
        return _functions(func.id, ctx.chain(), func.lineno, ctx)
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(func.attr) or []
        out = []
        for method, value, at in assigned:
            found = _functions(value.id, (method, ctx.module), at + 1, ctx) if isinstance(value, ast.Name) else None
            if found is None:
                return None
            out += found
        return out or None
    return None


def _graph_cut(node, ctx) -> bool:
    """A call in an nn.Module's ``forward`` (or a method it calls on ``self``) whose result is used, handed
    the activations (an argument that is not the method's own input), of a function of this module that
    turns gradients off."""
    if not (
        isinstance(node, ast.Call)
        and node.args
        and _module_method(ctx)
        and _runs_in_forward(ctx)
        and not isinstance(ctx.parent(node), ast.Expr)  # a momentum update returns nothing to the graph
    ):
        return False
    if _under_no_grad(node, ctx):
        return False  # the forward itself turns gradients off here: targets made on purpose (SwAV's codes)
    forward = _grad_off_submodule(node.func, ctx)
    if forward is not None:
        params = [a.arg for a in forward.args.args[1:]]
        return any(
            _activation(a, ctx, node.lineno) and (i >= len(params) or _values_read(forward, params[i], ctx))
            for i, a in enumerate(node.args)
        )
    called = _called_functions(node.func, ctx)
    return (
        bool(called)
        and all(_grad_off(f, ctx) and not _gathers(f, ctx) for f in called)
        and not _only_picks_indices(node, ctx)
        and not all(_raw_input(a, ctx, node.lineno) for a in node.args)
    )


def _raw_input(expr, ctx, line: int, depth: int = 0) -> bool:
    """The method's own input, unchanged (``pair_norm(x)`` on the ``x`` forward was given, or a name bound
    to it): nothing upstream of it in the module records a gradient, so the decorator cuts nothing."""
    if not isinstance(expr, ast.Name) or depth > 4 or expr.id == "self":
        return False
    value = ctx.value_of(expr, line)
    if value is not None:
        return _raw_input(value, ctx, line, depth + 1)
    fn = ctx.function
    return expr.id in {a.arg for a in (*fn.args.posonlyargs, *fn.args.args, *fn.args.kwonlyargs)}


def _runs_in_forward(ctx) -> bool:
    """The method is the module's ``forward``, or one its ``forward`` calls on ``self`` (``self.embed(x)``);
    asked once per method."""
    fn = ctx.function
    if fn.name == "forward":
        return True

    def called_by_forward(fn) -> bool:
        sites = helper_calls(fn, ctx) or ()
        return any(getattr((context_at(site, ctx) or ctx).function, "name", None) == "forward" for site in sites)

    return kept_on(fn, "_ptf214_called_by_forward", called_by_forward)


# what reads a tensor without differentiating it: an index it picks, a check on its values
_NOT_DIFFERENTIATED = ("argmax", "argmin", "argsort", "isnan", "isinf", "isfinite")


def _only_picks_indices(call, ctx) -> bool:
    """The result is bound to a name that the forward only hands to argmax/argmin (and checks for
    NaN): an index choice, differentiable nowhere (an RQ-VAE's Sinkhorn assignment; its encoder trains
    through the straight-through estimator)."""
    assign = ctx.parent(call)
    if not (isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name)):
        return False
    name = assign.targets[0].id
    loads = [
        n
        for n in walk(ctx.function)
        if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and n.lineno >= assign.lineno
    ]

    def picks(n) -> bool:
        up = ctx.parent(n)
        if isinstance(up, ast.Call) and n in up.args:
            return (getattr(up.func, "attr", None) or getattr(up.func, "id", None)) in _NOT_DIFFERENTIATED
        return isinstance(up, ast.Attribute) and up.attr in _NOT_DIFFERENTIATED

    return bool(loads) and all(picks(n) for n in loads)


def _grad_off_submodule(func, ctx):
    """The forward of ``self.regulate`` in ``self.regulate(h, ...)``, where ``self.regulate`` is built from
    a module class of this file whose own forward turns gradients off (``@torch.no_grad()`` on it); None
    otherwise."""
    if not (isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self"):
        return None
    held = ctx.held(func)
    cls = ctx.bindings.classes().get(held.what or "") if held is not None and held.kind == "module" else None
    forward = cls and next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    return forward if forward and _grad_off(forward, ctx) and not _gathers(forward, ctx) else None


# what a function may read of a tensor without its values flowing into the result
_METADATA = ("device", "dtype", "shape", "ndim", "size", "dim", "is_cuda", "layout", "numel")


def _values_read(fn, param: str, ctx) -> bool:
    """``fn`` reads the values of its parameter ``param``, not only its device, dtype or shape (a rotary
    embedding's ``forward(x, position_ids)`` under no_grad reads ``x.device`` and ``x.dtype`` only: its
    cos and sin come from the positions, and nothing upstream is cut)."""
    for n in walk(fn):
        if isinstance(n, ast.Name) and n.id == param and isinstance(n.ctx, ast.Load):
            up = ctx.parent(n)
            if not (isinstance(up, ast.Attribute) and up.attr in _METADATA):
                return True
    return False


def _activation(expr, ctx, line: int, depth: int = 0) -> bool:
    """The argument carries activations: it is, or was assigned, the output of one of the module's own
    layers (``h = self.encoder(x)``), not the forward's raw input (a frozen feature extractor run on the
    input, a teacher, cuts nothing upstream)."""
    if depth > 4:
        return False
    if isinstance(expr, ast.Name):
        value = ctx.value_of(expr, line)
        return value is not None and _activation(value, ctx, line, depth + 1)
    for n in walk(expr):
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and getattr(n.func.value, "id", None) == "self"
        ):
            held = ctx.held(n.func)
            if held is not None and held.kind == "module":
                return True
    return False


_COLLECTIVES = ("all_gather", "all_gather_into_tensor", "all_gather_object", "gather", "broadcast")


def _gathers(fn, ctx) -> bool:
    """The helper gathers tensors from other ranks with torch.distributed (MoCo's and BLIP's
    ``concat_all_gather``): a collective that records no gradient, so the decorator cuts nothing more."""
    return any(
        isinstance(n, ast.Call)
        and (ctx.qualified(n.func) or "").startswith("torch.distributed.")
        and (ctx.qualified(n.func) or "").rsplit(".", 1)[-1] in _COLLECTIVES
        for n in walk(fn)
    )


def _under_no_grad(node, ctx) -> bool:
    """``node`` sits in a ``with torch.no_grad():`` (or inference_mode) block of the function."""
    up = ctx.parent(node)
    while up is not None and up is not ctx.function:
        if isinstance(up, ast.With) and any(
            isinstance(i.context_expr, ast.Call) and ctx.qualified(i.context_expr.func) in GRAD_OFF_QUALIFIED
            for i in up.items
        ):
            return True
        up = ctx.parent(up)
    return False


RULE = Rule(
    "PTF214",
    ("graph-cut-in-forward",),
    "forward passes its activations through a function that turns gradients off (@torch.no_grad()): "
    "nothing before this call gets a gradient, so those layers never train; drop the decorator for code "
    "that runs inside forward",
    _graph_cut,
    nodes=CALL,
)
