"""What: an op undefined or with an infinite derivative at some inputs (x / d, log, sqrt, acos...) applied to
every element, its bad elements then masked away: torch.where(d != 0, x / d, 0), y[d != 0], masked_fill.
Why: The forward is finite, but backward multiplies the mask's zero gradient by the op's inf (or NaN) local
derivative on the masked-out elements: 0 * inf = NaN lands in .grad and spreads through the model.
Fix: make the input safe before the op (the "double where": d = torch.where(keep, d, 1); or clamp it).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import UNSURE, Rule, _is_call_to, _method
from torch_pitfalls.lint.rules.shared.flow import _decorated_grad_off, _grad_off, _site_args
from torch_pitfalls.lint.rules.shared.modules import _module_method
from torch_pitfalls.lint.rules.shared.training_loop import _differentiated
from torch_pitfalls.lint.walking import children, walk

_LOGS = ("log", "log2", "log10")
_SINGULAR_FUNCS = {f"torch.{n}": n for n in (*_LOGS, "sqrt", "rsqrt", "reciprocal", "acos", "asin", "atanh")}
_SINGULAR_FUNCS.update({"torch.arccos": "acos", "torch.arcsin": "asin", "torch.arctanh": "atanh"})
_SINGULAR_METHODS = (*_LOGS, "sqrt", "rsqrt", "reciprocal", "acos", "asin", "atanh", "arccos", "arcsin", "arctanh")
# a mask tests a tensor: comparisons, their negation and combinations, these predicates
_PREDICATES = (
    "isfinite",
    "isnan",
    "isinf",
    "ne",
    "gt",
    "ge",
    "lt",
    "le",
    "eq",
    "logical_and",
    "logical_or",
    "logical_not",
)
_SAFE = ("clamp", "clamp_min", "clip", "abs_", "where", "masked_fill", "nan_to_num", "softplus", "exp", "sigmoid")


def _singular_inputs(expr, ctx) -> list:
    """The inputs of the ops in ``expr`` whose derivative is infinite (or undefined) at some values: the
    denominator of a division, the argument of log/sqrt/acos/..., the base of a fractional power."""
    found = []
    for n in walk(expr):
        if isinstance(n, ast.BinOp):
            if isinstance(n.op, ast.Div) and not isinstance(n.right, ast.Constant):
                found.append(n.right)
            elif isinstance(n.op, ast.Pow) and _fractional(n.right):
                found.append(n.left)
        elif isinstance(n, ast.Call):
            q = ctx.qualified(n.func)
            if q in _SINGULAR_FUNCS and n.args:
                found.append(n.args[0])
            elif (
                q in ("torch.div", "torch.true_divide") and len(n.args) == 2 and not isinstance(n.args[1], ast.Constant)
            ):
                found.append(n.args[1])
            elif q is None and _method(n, *_SINGULAR_METHODS) and not n.args:
                found.append(n.func.value)
            elif q is None and _method(n, "div", "true_divide") and len(n.args) == 1:
                if not isinstance(n.args[0], ast.Constant):
                    found.append(n.args[0])
            elif q is None and _method(n, "pow") and len(n.args) == 1 and _fractional(n.args[0]):
                found.append(n.func.value)
    return found


def _fractional(node) -> bool:
    value = node.operand.value if isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant) else None
    value = node.value if isinstance(node, ast.Constant) else value
    if isinstance(node, ast.UnaryOp) and value is not None:
        return isinstance(value, (int, float)) and value != 0  # x ** -1, x ** -0.5: infinite at 0
    return type(value) is float and 0 < value < 1


def _guarded(u, ctx, line, depth=0) -> bool:
    """The op's input is made safe first: clamped, where-replaced, or a constant offset added."""
    if depth > 3:
        return False
    if isinstance(u, ast.Name):
        value = ctx.value_of(u, line)
        return value is not None and _guarded(value, ctx, line, depth + 1)
    for n in walk(u):
        if isinstance(n, ast.Call) and (
            (ctx.qualified(n.func) or "").rsplit(".", 1)[-1] in _SAFE or _method(n, *_SAFE)
        ):
            return True
        if (
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Add)
            and (
                isinstance(n.left, ast.Constant)
                or isinstance(n.right, ast.Constant)
                or _eps_name(n.left)
                or _eps_name(n.right)
            )
        ):
            return True
        if isinstance(n, ast.Call) and _method(n, "add") and n.args and isinstance(n.args[0], ast.Constant):
            return True
    return False


def _eps_name(node) -> bool:
    name = getattr(node, "id", getattr(node, "attr", "")) or ""
    return "eps" in name.lower() or "tiny" in name.lower()


def _zero_on_diagonal(u, ctx, line, depth=0) -> bool:
    """``torch.cdist(a, a)``: every point's distance to itself is exactly 0."""
    if isinstance(u, ast.Name) and depth < 3:
        value = ctx.value_of(u, line)
        return value is not None and _zero_on_diagonal(value, ctx, line, depth + 1)
    return _is_call_to(u, ctx, "torch.cdist") and len(u.args) >= 2 and ast.dump(u.args[0]) == ast.dump(u.args[1])


def _masked(node, ctx):
    """(mask, the masked values, sure it is torch's) for ``torch.where(m, a, b)``, ``y[m]`` (read or
    assigned), ``y.masked_fill(m, v)``; else None."""
    if isinstance(node, ast.Call):
        if _is_call_to(node, ctx, "torch.where") and len(node.args) == 3:
            return node.args[0], [node.args[1], node.args[2]], True
        if _method(node, "masked_fill", "masked_fill_") and node.args and ctx.qualified(node.func) is None:
            return node.args[0], [node.func.value], False
        return None
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Slice, ast.Tuple, ast.Constant)):
        return node.slice, [node.value], False
    return None


def _through_mask(node, ctx):
    found = _masked(node, ctx)
    if found is None or ctx.function is None or getattr(ctx.function, "name", None) == "__init__":
        return False
    mask, branches, sure = found
    line = getattr(node, "lineno", 1 << 30)
    if _grad_off(node, ctx) or any(_decorated_grad_off(fn, ctx) for fn in ctx.scopes):
        return False
    tested = {ast.dump(_core(c)) for c in _compared(mask, ctx, line)}
    answer = False
    for branch in branches:
        made = branch
        if isinstance(branch, ast.Name):
            made = ctx.value_of(branch, line)
            if made is None:
                continue
        for u in _singular_inputs(made, ctx):
            if _scalar(u, ctx) or _guarded(u, ctx, line) or _sum_of_squares(u, ctx, line):
                continue
            if ast.dump(_core(u)) in tested or _zero_on_diagonal(u, ctx, line):
                answer = not _without_graph(made, ctx, line)
                break
        if answer:
            break
    if not answer:
        return False
    if not sure:
        sure = (
            any(ctx.kind(b) == "tensor" for b in branches)
            or isinstance(node, ast.Subscript)
            and _tensor_op(branches[0], ctx, line)
        )
    sure = sure and (_module_method(ctx) or any(_carries_grad(b, ctx, line) for b in branches))
    differentiated = _differentiated(ctx)
    if not differentiated:
        return differentiated
    return True if sure else UNSURE


_KEEPS = ("abs", "float", "double", "half", "squeeze", "unsqueeze", "view", "reshape", "to", "flatten", "contiguous")


def _core(expr):
    """The tensor an expression is an elementwise rescaling of: ``d`` of ``2 * d``, ``d.abs()``, ``-d``,
    ``torch.abs(d)``: where one is 0 (or negative, or 1), so is the other."""
    while True:
        if isinstance(expr, ast.UnaryOp):
            expr = expr.operand
        elif (
            isinstance(expr, ast.BinOp)
            and isinstance(expr.op, (ast.Mult, ast.Div))
            and isinstance(expr.left, ast.Constant)
        ):
            expr = expr.right
        elif (
            isinstance(expr, ast.BinOp)
            and isinstance(expr.op, (ast.Mult, ast.Div))
            and isinstance(expr.right, ast.Constant)
        ):
            expr = expr.left
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _KEEPS:
            expr = expr.func.value
        elif isinstance(expr, ast.Call) and getattr(expr.func, "attr", None) == "abs" and len(expr.args) == 1:
            expr = expr.args[0]  # torch.abs(d)
        else:
            return expr


def _compared(mask, ctx, line, depth=0) -> list:
    """The tensors a boolean mask tests: the sides of its comparisons, what its predicates are asked of
    (``d != 0``, ``x > 0``, ``~torch.isfinite(y)``), through a name assigned the mask."""
    if depth > 4:
        return []
    if isinstance(mask, ast.Name):
        value = ctx.value_of(mask, line)
        return _compared(value, ctx, line, depth + 1) if value is not None else []
    if isinstance(mask, ast.Compare):
        return [e for e in (mask.left, *mask.comparators) if not isinstance(e, ast.Constant)]
    if isinstance(mask, ast.UnaryOp) and isinstance(mask.op, (ast.Invert, ast.Not)):
        return _compared(mask.operand, ctx, line, depth + 1)
    if isinstance(mask, ast.BinOp) and isinstance(mask.op, (ast.BitAnd, ast.BitOr)):
        return _compared(mask.left, ctx, line, depth + 1) + _compared(mask.right, ctx, line, depth + 1)
    if isinstance(mask, ast.BoolOp):
        return [c for v in mask.values for c in _compared(v, ctx, line, depth + 1)]
    if isinstance(mask, ast.Call):
        name = getattr(mask.func, "attr", getattr(mask.func, "id", ""))
        if name in _PREDICATES:
            if isinstance(mask.func, ast.Attribute) and ctx.qualified(mask.func) is None:
                return [mask.func.value, *mask.args]
            return list(mask.args)
        if name == "bool" and isinstance(mask.func, ast.Attribute):
            return _compared(mask.func.value, ctx, line, depth + 1)
    return []


_SCALAR_CALLS = ("int", "float", "len", "min", "max", "abs", "sum", "round")


def _scalar(u, ctx) -> bool:
    """A Python number, not a tensor: a constant, ``int(c)``, ``math.sqrt(d)``, ``x.size(-1)``, ``x.shape[1]``,
    or a module's hyperparameter (``self.beta``, unless the bindings know it is a tensor)."""
    if isinstance(u, ast.Constant):
        return True
    if isinstance(u, ast.Call):
        q = ctx.qualified(u.func) or ""
        if q.startswith(("math.", "numpy.", "np.")) or getattr(u.func, "id", None) in _SCALAR_CALLS:
            return True
        if (
            isinstance(u.func, ast.Attribute)
            and u.func.attr in ("size", "dim", "numel", "item", "sqrt")
            and _scalar(u.func.value, ctx)
        ):
            return True
        if isinstance(u.func, ast.Attribute) and u.func.attr in ("size", "dim", "numel", "item", "__len__"):
            return True
    if isinstance(u, ast.Subscript) and isinstance(u.value, ast.Attribute) and u.value.attr == "shape":
        return True
    if isinstance(u, ast.Attribute) and isinstance(u.value, ast.Name) and u.value.id == "self":
        return ctx.kind(u) != "tensor"
    if isinstance(u, ast.BinOp):
        return _scalar(u.left, ctx) and _scalar(u.right, ctx)
    if isinstance(u, ast.Name) and isinstance(ctx.function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return _number_parameter(ctx.function, u.id)
    return False


def _number_parameter(fn, name: str) -> bool:
    """A parameter annotated ``float``/``int`` (``Optional[float]``) or defaulting to a number: a threshold."""
    a = fn.args
    positional = [*a.posonlyargs, *a.args]
    defaults = dict(zip([x.arg for x in positional][len(positional) - len(a.defaults) :], a.defaults))
    defaults.update({x.arg: d for x, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
    for arg in (*positional, *a.kwonlyargs):
        if arg.arg != name:
            continue
        words = {n.id for n in walk(arg.annotation) if isinstance(n, ast.Name)} if arg.annotation is not None else set()
        default = defaults.get(name)
        number = isinstance(default, ast.Constant) and type(default.value) in (int, float)
        return number or bool(words & {"float", "int"}) and not words & {"Tensor"}
    return False


_NO_GRAPH = frozenset(
    "tensor as_tensor asarray from_numpy zeros ones empty full rand randn randint randperm arange linspace logspace "
    "eye zeros_like ones_like full_like empty_like FloatTensor LongTensor Tensor sparse_coo_tensor load".split()
)


def _without_graph(expr, ctx, line, depth=0) -> bool:
    """Every tensor the expression is made of is built in this function by a factory (torch.tensor, a file
    read, torch.linspace...) without requires_grad, or detached, or is a comparison's booleans (SAM 2's
    areas, ``torch.sum(logits > t).float()``): nothing is differentiated through it."""
    if depth > 5:
        return False
    leaves, todo = 0, [expr]
    while todo:
        n = todo.pop()
        if isinstance(n, ast.Compare):  # a comparison's booleans carry no graph (counted: sum(x > t))
            leaves += 1
            continue
        if isinstance(n, ast.Call):
            q = ctx.qualified(n.func) or ""
            if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _NO_GRAPH:
                grad = next((k.value for k in n.keywords if k.arg == "requires_grad"), None)
                if grad is not None and not (isinstance(grad, ast.Constant) and grad.value is False):
                    return False
                leaves += 1
                continue  # what it is built from does not matter
            if q.startswith(("numpy.", "np.")) or _method(n, "detach", "numpy", "item", "tolist"):
                leaves += 1
                continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            if n.id in ctx.imports:
                continue
            binding, _ = ctx.bindings.lookup(n.id, ctx.chain(), line)
            if binding is None:
                continue
            if binding.how not in ("assign", "aug") or binding.value is None:
                return False  # a parameter, a loop variable: may carry a graph
            inner = binding.value.value if binding.how == "aug" else binding.value
            if not _without_graph(inner, ctx, binding.line, depth + 1):
                return False
            leaves += 1
            continue
        todo.extend(children(n))
    return leaves > 0


def _carries_grad(expr, ctx, line) -> bool:
    """The expression is shown to carry a graph: made (through this function's names, and for a parameter
    what the module's calls pass) from a tensor with requires_grad=True or a module's output."""
    seen, todo = set(), [(expr, ctx.chain(), line, 0)]
    while todo:
        e, chain, at, depth = todo.pop()
        if depth > 6:
            continue
        for n in walk(e):
            if isinstance(n, ast.Call):
                grad = next((k.value for k in n.keywords if k.arg == "requires_grad"), None)
                if (isinstance(grad, ast.Constant) and grad.value is True) or _method(n, "requires_grad_"):
                    return True
                held = ctx.bindings.held(n.func, chain, at) if isinstance(n.func, (ast.Name, ast.Attribute)) else None
                if held is not None and held.kind in ("module", "loss"):
                    return True
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and (n.id, id(chain[0])) not in seen:
                seen.add((n.id, id(chain[0])))
                binding, where = ctx.bindings.lookup(n.id, chain, at)
                if binding is None:
                    continue
                if binding.how in ("assign", "item", "aug") and binding.value is not None:
                    todo.append((binding.value, where, binding.line, depth + 1))
                elif binding.how == "param":
                    for value, caller, site in _site_args(where[0], n.id, ctx.bindings) or []:
                        todo.append((value, caller, site, depth + 1))
    return False


def _tensor_op(branch, ctx, line) -> bool:
    """The masked values come from a torch op (``y = torch.log(x)``) or an op on a known tensor."""
    made = ctx.value_of(branch, line) if isinstance(branch, ast.Name) else branch
    if made is None:
        return False
    return any(
        (isinstance(n, ast.Call) and (ctx.qualified(n.func) or "").startswith("torch."))
        or (isinstance(n, ast.Name) and ctx.kind(n, line) == "tensor")
        for n in walk(made)
    )


def _sum_of_squares(u, ctx, line) -> bool:
    """The input is a sum of squares: its square root is PTF232's (sqrt-at-zero-nan-grad), left to it."""
    made = ctx.value_of(u, line) if isinstance(u, ast.Name) else u
    nodes = list(walk(made)) if made is not None else []
    squared = any(
        (
            isinstance(n, ast.BinOp)
            and isinstance(n.op, ast.Pow)
            and isinstance(n.right, ast.Constant)
            and n.right.value == 2
        )
        or (_method(n, "pow") and n.args and isinstance(n.args[0], ast.Constant) and n.args[0].value == 2)
        or _method(n, "square")
        for n in nodes
    )
    return squared and any(_method(n, "sum") or _is_call_to(n, ctx, "torch.sum") for n in nodes)


RULE = Rule(
    "PTF249",
    ("nan-grad-through-mask",),
    "an op with an infinite (or undefined) derivative is applied to every element and its bad elements are "
    "masked away afterwards (torch.where / indexing / masked_fill): the forward is finite, but backward computes "
    "0 * inf = NaN on the masked-out elements; make the input safe before the op (the double where: "
    "d = torch.where(keep, d, 1)), or clamp it",
    _through_mask,
    nodes=(ast.Call, ast.Subscript),
)
