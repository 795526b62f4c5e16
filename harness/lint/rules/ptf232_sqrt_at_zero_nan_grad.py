"""What: the square root of a sum of squares (a distance or norm written by hand,
``((a - b) ** 2).sum(-1).sqrt()``) in differentiated code, with no epsilon inside.
Why: Where the sum is exactly 0 (a point's distance to itself, a zero row) the derivative of sqrt is inf,
and inf * 0 from the square gives NaN, which spreads to every weight.
Fix: ``(s + eps).sqrt()`` or ``s.clamp_min(eps).sqrt()``, or torch.linalg.vector_norm / torch.cdist (gradient 0 at 0).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _decorated_grad_off, _grad_off, _own_code
from torch_pitfalls.lint.rules.shared.training_loop import _differentiated
from torch_pitfalls.lint.walking import walk

# torch factories that make a tensor without a graph (a grid, a constant): a square root of these is
# never differentiated
_NO_GRAPH = frozenset(
    "arange linspace logspace meshgrid zeros ones full eye rand randn randint randperm tensor as_tensor "
    "from_numpy zeros_like ones_like empty".split()
)


def _half(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) is float and node.value == 0.5


def _two(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 2


def _sqrt_of(node, ctx):
    """(argument, proven torch) of a square root: torch.sqrt(s), s.sqrt(), s ** 0.5, s.pow(0.5),
    torch.pow(s, 0.5); else (None, False)."""
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Pow) and _half(node.right):
        return node.left, False
    if not isinstance(node, ast.Call):
        return None, False
    q = ctx.qualified(node.func)
    if q == "torch.sqrt" and len(node.args) == 1:
        return node.args[0], True
    if q == "torch.pow" and len(node.args) == 2 and _half(node.args[1]):
        return node.args[0], True
    if q is None and _method(node, "sqrt") and not node.args and not node.keywords:
        return node.func.value, False
    if q is None and _method(node, "pow") and len(node.args) == 1 and _half(node.args[0]):
        return node.func.value, False
    return None, False


def _resolved(expr, ctx, line):
    """A bare name taken to what it was assigned (a few steps), with the line of that assignment."""
    for _ in range(4):
        if not isinstance(expr, ast.Name):
            break
        binding, _where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how != "assign" or _patched(expr.id, binding.line, line, ctx):
            return expr, line
        expr, line = binding.value, binding.line
    return expr, line


def _patched(name, start, end, ctx) -> bool:
    """Between its assignment and the use, the name is changed in place (``d2[d2 == 0] = eps``,
    ``d2 += eps``, ``d2.clamp_(min=eps)``): what the assignment says is not all it holds."""
    for n in ast.walk(ctx.function):
        line = getattr(n, "lineno", 0)
        if not start < line < end:
            continue
        if isinstance(n, ast.Assign) and any(
            isinstance(t, ast.Subscript) and getattr(t.value, "id", None) == name for t in n.targets
        ):
            return True
        if isinstance(n, ast.AugAssign) and getattr(n.target, "id", None) == name:
            return True
        if (
            isinstance(n, ast.Call)
            and isinstance(n.func, ast.Attribute)
            and n.func.attr.endswith("_")
            and getattr(n.func.value, "id", None) == name
        ):
            return True
    return False


def _square(expr, ctx, line):
    """The base of a square, ``t ** 2``, ``t.pow(2)``, ``torch.pow(t, 2)``, ``t * t``, ``torch.square(t)``,
    ``t.square()``; else None."""
    expr, line = _resolved(expr, ctx, line)
    if isinstance(expr, ast.BinOp):
        if isinstance(expr.op, ast.Pow) and _two(expr.right):
            return expr.left
        if isinstance(expr.op, ast.Mult) and ast.dump(expr.left) == ast.dump(expr.right):
            return expr.left
        return None
    if not isinstance(expr, ast.Call):
        return None
    q = ctx.qualified(expr.func)
    if q == "torch.square" and len(expr.args) == 1:
        return expr.args[0]
    if q == "torch.pow" and len(expr.args) == 2 and _two(expr.args[1]):
        return expr.args[0]
    if q is None and _method(expr, "square") and not expr.args:
        return expr.func.value
    if q is None and _method(expr, "pow") and len(expr.args) == 1 and _two(expr.args[0]):
        return expr.func.value
    return None


def _sum_of_squares(expr, ctx, line):
    """The bases squared where ``expr`` is a sum (or mean) of squares with nothing else added:
    ``(d ** 2).sum(-1)``, ``torch.sum(x * x, dim=1)``, ``re ** 2 + im ** 2``; with whether the sum is
    proven a tensor's (torch.sum, a ``dim=`` keyword). (None, False) otherwise."""
    expr, line = _resolved(expr, ctx, line)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Add):
        parts = []
        proven = False
        for side in (expr.left, expr.right):
            base = _square(side, ctx, line)
            if base is not None:
                parts.append(base)
                continue
            inner, sure = _sum_of_squares(side, ctx, line)
            if inner is None:
                return None, False
            parts += inner
            proven = proven or sure
        return parts, proven
    if not isinstance(expr, ast.Call):
        return None, False
    q = ctx.qualified(expr.func)
    if q in ("torch.sum", "torch.mean") and expr.args:
        base = _square(expr.args[0], ctx, line)
        return ([base], True) if base is not None else (None, False)
    if q is None and _method(expr, "sum", "mean"):
        if _kw(expr, "axis") is not None or _kw(expr, "keepdims") is not None:  # NumPy's spelling
            return None, False
        base = _square(expr.func.value, ctx, line)
        return ([base], _kw(expr, "dim") is not None) if base is not None else (None, False)
    return None, False


def _without_graph(base, ctx, line) -> bool:
    """Every tensor the squared base is made of is detached or built by a factory with no graph
    (a grid from torch.arange / meshgrid): nothing is differentiated through the square root."""
    names = []
    for n in ast.walk(base):
        if isinstance(n, ast.Attribute) and n.attr in ("data",):
            return True
        if _method(n, "detach"):
            return True
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            names.append(n)
        if isinstance(n, ast.Attribute) and getattr(n.value, "id", None) == "self":
            return False  # a module's attribute: maybe a parameter
    if not names:
        return False
    for name in names:
        value, _at = _resolved(name, ctx, line)
        if isinstance(value, ast.Name):
            binding, _ = ctx.bindings.lookup(value.id, ctx.chain(), line)
            if binding is not None and binding.how == "item" and isinstance(binding.value, ast.Call):
                value = binding.value  # xx, yy = torch.meshgrid(...)
            elif binding is None and ctx.qualified(value) is not None:
                continue  # an imported name (torch), not a tensor
            else:
                return False
        while _method(value, "to", "cuda", "cpu", "float", "double", "half", "contiguous", "clone", "detach"):
            if value.func.attr == "detach":
                break
            value = value.func.value
        if _method(value, "detach"):
            continue
        if not (isinstance(value, ast.Call) and _factory_without_grad(value, ctx)):
            return False
    return True


def _factory_without_grad(call, ctx) -> bool:
    q = ctx.qualified(call.func) or ""
    if not (q.startswith("torch.") and q.rsplit(".", 1)[-1] in _NO_GRAPH):
        return False
    grad = _kw(call, "requires_grad")
    return grad is None or (isinstance(grad, ast.Constant) and grad.value is False)


def _in_no_grad_function(ctx) -> bool:
    return any(_decorated_grad_off(fn, ctx) for fn in ctx.scopes)


def _self_difference(base, ctx, line) -> bool:
    """The squared base is a tensor minus itself broadcast (``z[:, None] - z[None]``,
    ``x.unsqueeze(1) - x.unsqueeze(0)``): a matrix of pairwise differences whose diagonal is exactly 0."""
    base, line = _resolved(base, ctx, line)
    if not (isinstance(base, ast.BinOp) and isinstance(base.op, ast.Sub)):
        return False
    roots = {_root(side) for side in (base.left, base.right)}
    return len(roots) == 1 and None not in roots and ast.dump(base.left) != ast.dump(base.right)


def _root(expr):
    """The name an indexing or reshaping chain starts from: ``z`` of ``z[:, None, :]``, ``x.unsqueeze(1)``."""
    while True:
        if isinstance(expr, ast.Subscript) and _broadcast_index(expr.slice):
            expr = expr.value
        elif _method(expr, "unsqueeze", "view", "reshape", "expand", "expand_as", "transpose", "permute"):
            expr = expr.func.value
        elif isinstance(expr, ast.Name):
            return expr.id
        else:
            return None


def _broadcast_index(index) -> bool:
    """An index that adds axes or takes whole ones (``[:, None, :]``, ``[None]``, ``[..., None]``), not one that
    gathers rows (``pos[i]``: the pairs of an edge list, which are never a row with itself)."""
    parts = index.elts if isinstance(index, ast.Tuple) else [index]
    return any(isinstance(p, ast.Constant) and p.value is None for p in parts) and all(
        isinstance(p, ast.Slice) or (isinstance(p, ast.Constant) and p.value in (None, Ellipsis)) for p in parts
    )


_KEEPS_GRAPH = (
    "to",
    "cuda",
    "cpu",
    "float",
    "double",
    "half",
    "contiguous",
    "clone",
    "view",
    "reshape",
    "squeeze",
    "unsqueeze",
    "flatten",
    "permute",
    "transpose",
    "exp",
    "tanh",
    "sigmoid",
    "relu",
    "abs",
)


def _carries_grad(expr, chain, line, ctx, depth=0) -> bool:
    """The expression is proven to hold a tensor that requires grad and may be exactly 0: a module's output
    (an activation, an embedding) or a tensor made with requires_grad=True, or an op on one (not a
    Parameter: a norm of a row of random weights is never 0), followed through names and the module's
    own call sites (a function handed to another as an argument included)."""
    if expr is None or depth > 8:
        return False
    b = ctx.bindings
    if isinstance(expr, ast.Name):
        binding, where = b.lookup(expr.id, chain, line)
        if binding is None:
            return False
        if binding.how in ("assign", "item"):
            return _carries_grad(binding.value, where, binding.line, ctx, depth + 1)
        if binding.how == "param":
            return any(_carries_grad(v, c, at, ctx, depth + 1) for v, c, at in _passed_to(where[0], expr.id, ctx))
        return False
    if isinstance(expr, ast.Subscript):
        return _carries_grad(expr.value, chain, line, ctx, depth + 1)
    if isinstance(expr, ast.BinOp):
        return any(_carries_grad(s, chain, line, ctx, depth + 1) for s in (expr.left, expr.right))
    if isinstance(expr, ast.UnaryOp):
        return _carries_grad(expr.operand, chain, line, ctx, depth + 1)
    if isinstance(expr, ast.Attribute):
        if expr.attr in ("real", "imag", "T", "mT"):
            return _carries_grad(expr.value, chain, line, ctx, depth + 1)
        return False  # a module's parameter: a row of weights is not exactly 0
    return isinstance(expr, ast.Call) and _call_carries_grad(expr, chain, line, ctx, depth)


def _call_carries_grad(expr, chain, line, ctx, depth) -> bool:
    """A call's result requires grad: a module's call, a factory with requires_grad=True, an op on such a tensor."""
    b = ctx.bindings
    q = ctx.qualified(expr.func) or ""
    grad = _kw(expr, "requires_grad")
    if q.startswith("torch.") and isinstance(grad, ast.Constant) and grad.value is True:
        return True
    if _method(expr, "requires_grad_"):
        return True
    if _method(expr, "detach"):
        return False
    held = b.held(expr.func, chain, line, _class_of(chain, ctx))
    if held is not None and held.kind in ("module", "loss"):
        return True
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] not in _NO_GRAPH:
        return any(_carries_grad(a, chain, line, ctx, depth + 1) for a in expr.args)
    if _method(expr, *_KEEPS_GRAPH) and q == "":
        return _carries_grad(expr.func.value, chain, line, ctx, depth + 1)
    return False


def _class_of(chain, ctx):
    fn = chain[0] if chain else None
    for klass in ctx.bindings.classes().values():
        if fn in klass.body:
            return klass
    return None


def _passed_to(fn, param, ctx) -> list:
    """(value, caller's scopes, line) for ``param`` at each call of ``fn``: its direct calls, and the calls
    through a parameter to which the module hands the function itself (``run(device, distances)`` ...
    ``distance(z)``)."""
    b = ctx.bindings
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or b.module_function(fn.name) is not fn:
        return []
    calls = [(call, chain) for call, chain, _k in b.call_sites(fn.name)]
    for call, _chain, _k in [s for name in list(b._calls or {}) for s in b.call_sites(name)]:
        callee = b.module_function(getattr(call.func, "id", ""))
        if callee is None or callee is fn:
            continue
        for p, value in arguments(call, callee).items():
            if isinstance(value, ast.Name) and value.id == fn.name:
                calls += [(c, k) for c, k, _ in b.call_sites(p) if k and k[0] is callee]
    out = []
    for call, chain in calls:
        value = arguments(call, fn).get(param)
        if value is not None:
            out.append((value, chain, call.lineno))
    return out


def _resolved_base(base, ctx, line):
    """The expression a squared base names (``diff`` of ``diff = x.unsqueeze(1) - x.unsqueeze(0)``)."""
    return (ctx.value_of(base, line) or base) if isinstance(base, ast.Name) else base


def _sqrt_at_zero(node, ctx):
    arg, proven = _sqrt_of(node, ctx)
    if arg is None or ctx.function is None:
        return False
    line = getattr(node, "lineno", 1 << 30)
    bases, sure_sum = _sum_of_squares(arg, ctx, line)
    if not bases:
        return False
    if getattr(ctx.function, "name", None) == "__init__" or _grad_off(node, ctx) or _in_no_grad_function(ctx):
        return False
    if not _own_code(node, ctx):
        return False
    if all(_without_graph(b, ctx, line) for b in bases):
        return False
    differentiated = _differentiated(ctx)
    if not differentiated:
        return differentiated
    zero_here = any(_self_difference(b, ctx, line) for b in bases)
    # .unsqueeze() is torch's (a NumPy array has none): a difference built with it is of tensors
    torch_proven = (
        proven
        or sure_sum
        or any(ctx.kind(b) == "tensor" for b in bases)
        or (zero_here and any(_method(n, "unsqueeze") for b in bases for n in walk(_resolved_base(b, ctx, line))))
    )
    grad_here = any(_carries_grad(b, ctx.chain(), line, ctx) for b in bases)
    return True if torch_proven and (zero_here or grad_here) else UNSURE


RULE = Rule(
    "PTF232",
    ("sqrt-at-zero-nan-grad",),
    "the square root of a sum of squares has an infinite derivative where the sum is exactly 0 (a point's "
    "distance to itself, a zero row), and backward gives NaN there (inf * 0) that spreads to every weight; "
    "add an epsilon inside, (s + eps).sqrt() or s.clamp_min(eps).sqrt(), or use torch.linalg.vector_norm / "
    "torch.cdist, whose gradient at 0 is 0",
    _sqrt_at_zero,
    nodes=(ast.Call, ast.BinOp),
    needs=("sqrt", ".5"),
)
