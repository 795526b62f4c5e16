"""What: .backward() (or torch.autograd.backward/grad) without a gradient on a tensor with more than
one element: a per-sample loss (reduction='none') never reduced, an elementwise result, a layer's output.
Why: autograd starts the backward pass from d(output)/d(output) = 1, which exists only for one number;
for n elements it would need n weights and will not guess: RuntimeError "grad can be implicitly created
only for scalar outputs".
Fix: reduce first (loss.mean() or .sum()), or pass the weights: out.backward(gradient=torch.ones_like(out)).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.walking import walk

# what keeps every element: the result has as many elements as the (broadcast) input
_ELEMENTWISE = frozenset(
    """pow exp log log1p log2 log10 abs sqrt rsqrt square sigmoid tanh relu neg negative clamp clip mul add sub div
    true_divide multiply subtract divide float double half to cuda cpu contiguous clone squeeze unsqueeze view_as
    sin cos erf expm1 reciprocal softplus""".split()
)
_ELEMENTWISE_FUNCTIONS = frozenset(
    """pow exp log log1p abs sqrt square sigmoid tanh relu neg clamp clip mul add sub div sin cos erf""".split()
)
_FACTORIES = ("randn", "rand", "ones", "zeros", "empty", "full")
_LAYERS_WITH_OUT = {
    "Linear": (1, "out_features"),
    "Bilinear": (2, "out_features"),
    "Conv1d": (1, "out_channels"),
    "Conv2d": (1, "out_channels"),
    "Conv3d": (1, "out_channels"),
}


def _answer(found):
    """All True: True; any False: False; else UNSURE."""
    found = list(found)
    if not found or any(f is False for f in found):
        return False
    return True if all(f is True for f in found) else UNSURE


def _unreduced_loss(call, ctx, chain, line) -> bool:
    """A loss computed per element: ``F.<loss>(..., reduction='none')`` (or ``reduce=False``), or a call
    of an ``nn.<Loss>(reduction='none')`` (inline, bound to a name or a ``self.`` attribute)."""
    q = ctx.qualified(call.func) or ""
    if q.startswith("torch.nn.functional."):
        return _per_element(call, ctx, chain, line)
    ctors = _constructors(call.func, ctx, chain, line)
    return bool(ctors) and all(
        (ctx.qualified(c.func) or "").startswith("torch.nn.")
        and (ctx.qualified(c.func) or "").endswith("Loss")
        and _per_element(c, ctx, _scopes_of(c, ctx), c.lineno)
        for c in ctors
    )


def _literal(value, ctx, chain, line):
    """A literal, or the one literal a name holds (every value it may hold, the same literal)."""
    if isinstance(value, ast.Name):
        found = _values(value.id, chain, line, ctx.bindings) or []
        literals = {v.value for v in found if isinstance(v, ast.Constant)}
        return (
            literals.pop()
            if len(found) >= 1 and len(literals) == 1 and len(found) == sum(isinstance(v, ast.Constant) for v in found)
            else None
        )
    return value.value if isinstance(value, ast.Constant) else None


def _per_element(call, ctx, chain, line) -> bool:
    """``reduction='none'`` (or the legacy ``reduce=False``), written or held by a name."""
    reduction, reduce = _kw(call, "reduction"), _kw(call, "reduce")
    return (reduction is not None and _literal(reduction, ctx, chain, line) == "none") or (
        reduce is not None and _literal(reduce, ctx, chain, line) is False
    )


def _constructors(func, ctx, chain, line) -> list:
    """The calls that built what ``func`` names: itself (``nn.MSELoss(...)(a, b)``), every value of a name
    (through the module's call sites for a parameter), or every ``self.attr = ...`` of the class."""
    if isinstance(func, ast.Call):
        return [_unmoved(func)]
    if isinstance(func, ast.Name):
        values = _values(func.id, chain, line, ctx.bindings)
        return [_unmoved(v) for v in values] if values and all(isinstance(v, ast.Call) for v in values) else []
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(func.attr) or []
        values = [v for _, v, _ in assigned]
        return [_unmoved(v) for v in values] if values and all(isinstance(v, ast.Call) for v in values) else []
    return []


def _unmoved(call):
    """``nn.NLLLoss(reduce=False).cuda()``: the constructor under ``.cuda()`` / ``.to(...)``."""
    while _method(call, "cuda", "to", "cpu", "double", "float", "half") and isinstance(call.func.value, ast.Call):
        call = call.func.value
    return call


def _numel_of_sizes(args) -> int | None:
    """The number of elements of ``torch.randn(2, 3)`` / ``torch.ones((2, 3))``, where the sizes are literals."""
    sizes = args[0].elts if len(args) == 1 and isinstance(args[0], (ast.Tuple, ast.List)) else args
    n = 1
    for s in sizes:
        if not (isinstance(s, ast.Constant) and type(s.value) is int):
            return None
        n *= s.value
    return n


def _literal_numel(node) -> int | None:
    if isinstance(node, (ast.List, ast.Tuple)):
        return sum((_literal_numel(e) or 0) for e in node.elts) if node.elts else 0
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float, bool)):
        return 1
    return None


def _layer_output(call, ctx, chain, line):
    """A module's output: True for a torch.nn layer whose output has more than one element per sample
    (``nn.Linear(h, 10)``); UNSURE for a model class of this file whose forward reduces nothing (it may
    still return a vector); False otherwise (another file's model, which may well return its loss)."""
    held = ctx.bindings.held(call.func, chain, line, ctx.klass) if not isinstance(call.func, ast.Call) else None
    ctors = _constructors(call.func, ctx, chain, line)
    if not ctors or (held is not None and held.kind != "module"):
        return False
    answers = []
    for c in ctors:
        q = ctx.qualified(c.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q.startswith("torch.nn.") and last in _LAYERS_WITH_OUT:
            index, name = _LAYERS_WITH_OUT[last]
            out = _arg(c, index, name)
            answers.append(isinstance(out, ast.Constant) and type(out.value) is int and out.value > 1)
        elif isinstance(c.func, ast.Name) and _forward_returns_many(c.func.id, ctx):
            answers.append(True)  # a loss module of the file that returns a loss per row
        elif isinstance(c.func, ast.Name) and _unreduced_forward(c.func.id, ctx):
            answers.append(UNSURE)
        else:
            answers.append(False)
    return _answer(answers)


def _past_the_batch(call) -> bool:
    """``x.mean(dim=1)``, ``x.sum(2)``: a reduction along one positive axis past the first, which leaves the
    leading (batch) axis; not ``dim=0``, a negative axis (the first one, on a vector) or several."""
    dim = call.args[0] if call.args else _kw(call, "dim")
    return isinstance(dim, ast.Constant) and type(dim.value) is int and dim.value >= 1


def _forward_returns_many(name, ctx) -> bool:
    """A module class of this file whose forward returns, at every return, what a loss computed per element
    makes (``F.huber_loss(..., reduction="none").mean(dim=1) * weight``): a loss per row, never one number."""
    cls = ctx.bindings.classes().get(name)
    if cls is None or not ctx.bindings.is_module_class(cls):
        return False
    forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    returns = [r for r in walk(forward) if isinstance(r, ast.Return) and r.value is not None] if forward else []
    chain = (forward, cls, ctx.module)
    return bool(returns) and all(_many(r.value, ctx, chain, r.lineno) is True for r in returns)


def _unreduced_forward(name, ctx) -> bool:
    """A module class of this file whose forward returns no loss: no reduction, no name saying loss."""
    cls = ctx.bindings.classes().get(name)
    if cls is None or not ctx.bindings.is_module_class(cls):
        return False
    forward = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "forward"), None)
    if forward is None:
        return False
    returns = [r.value for r in walk(forward) if isinstance(r, ast.Return) and r.value is not None]
    if not returns or not all(
        any(isinstance(n, ast.Call) and getattr(getattr(n.func, "value", None), "id", None) == "self" for n in walk(v))
        for v in returns
    ):
        return False  # ``return input``: the shape of what it was given
    for r in walk(forward):
        if isinstance(r, ast.Return) and r.value is not None:
            for n in walk(r.value):
                if _method(n, "mean", "sum", "item") or "loss" in (getattr(n, "id", "") or getattr(n, "attr", "")):
                    return False
    return True


def _many(expr, ctx, chain, line, depth=0):
    """True where the expression holds a tensor of more than one element, UNSURE where it holds a module's
    output of a shape the file does not show, False otherwise (a reduction, unknown)."""
    if depth > 8 or expr is None:
        return False
    if isinstance(expr, ast.Name):
        values = _values(expr.id, chain, line, ctx.bindings)
        if not values or any(isinstance(v, ast.Name) and v.id == expr.id for v in values):
            return False
        return _answer(_many(v, ctx, _scopes_of(v, ctx), getattr(v, "lineno", line), depth + 1) for v in values)
    if isinstance(expr, ast.BinOp):  # broadcasting never shrinks: one operand with many elements is enough
        sides = [_many(s, ctx, chain, line, depth + 1) for s in (expr.left, expr.right)]
        return True if True in sides else (UNSURE if any(s is UNSURE for s in sides) else False)
    if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.USub):
        return _many(expr.operand, ctx, chain, line, depth + 1)
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func)
    if q is not None:
        last = q.rsplit(".", 1)[-1]
        if q == "torch.tensor" and expr.args:
            n = _literal_numel(expr.args[0])
            return n is not None and n > 1
        if q.startswith("torch.") and q.count(".") == 1 and last in _FACTORIES:
            n = _numel_of_sizes(expr.args if last != "full" else expr.args[:1])
            return n is not None and n > 1
        if q.startswith("torch.") and q.count(".") == 1 and last in _ELEMENTWISE_FUNCTIONS and expr.args:
            return _many(expr.args[0], ctx, chain, line, depth + 1)
        if q.startswith("torch.nn.functional."):
            return _unreduced_loss(expr, ctx, chain, line)
        return False
    if isinstance(expr.func, ast.Attribute) and expr.func.attr in (*_ELEMENTWISE, "mean", "sum", "forward"):
        return _many_method(expr, ctx, chain, line, depth)
    if _unreduced_loss(expr, ctx, chain, line):
        return True
    return _layer_output(expr, ctx, chain, line)


def _many_method(expr, ctx, chain, line, depth):
    """``_many`` of a method's result: an elementwise method keeps its receiver's elements, a mean or sum along
    a later axis keeps the batch axis (``per_target.mean(dim=1)``), a forward's result is not read here."""
    attr = expr.func.attr
    if attr in _ELEMENTWISE:
        return _many(expr.func.value, ctx, chain, line, depth + 1)
    if attr in ("mean", "sum") and _past_the_batch(expr):
        return _many(expr.func.value, ctx, chain, line, depth + 1) is True
    return False


def _backward_without_gradient(node, ctx):
    if not isinstance(node, ast.Call) or any(k.arg is None for k in node.keywords):
        return False
    if _method(node, "backward") and ctx.qualified(node.func) is None:
        if node.args or _kw(node, "gradient") is not None:
            return False
        out = node.func.value
    elif ctx.qualified(node.func) == "torch.autograd.backward":
        if _arg(node, 1, "grad_tensors") is not None:
            return False
        out = _arg(node, 0, "tensors")
    elif ctx.qualified(node.func) == "torch.autograd.grad":
        if _arg(node, 2, "grad_outputs") is not None:
            return False
        out = _arg(node, 0, "outputs")
    else:
        return False
    if isinstance(out, (ast.List, ast.Tuple)):
        return False
    found = _many(out, ctx, ctx.chain(), node.lineno)
    if found is UNSURE and "loss" in (getattr(out, "id", "") or getattr(out, "attr", "")).lower():
        return False  # ``loss = model(x)``: a model that returns its loss
    return found


RULE = Rule(
    "PTF254",
    ("backward-non-scalar",),
    "backward() without a gradient on a tensor of more than one element (a per-sample loss, an elementwise "
    "result, a layer's output) raises 'grad can be implicitly created only for scalar outputs'; reduce it "
    "first (.mean() or .sum()) or pass gradient=torch.ones_like(out)",
    _backward_without_gradient,
    nodes=CALL,
    needs=("backward", "autograd"),
)
