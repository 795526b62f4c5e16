"""What: an epoch's loss averaged with the wrong denominator: per-batch mean losses summed and divided by the
number of samples, losses weighted by batch size divided by the number of batches, or batch means averaged
where the loader's last batch is provably smaller.
Why: the first is about batch_size times too small, the second too large; the third weighs the small last
batch like a full one, so the number changes with the batch size.
Fix: ``total += loss.item() * x.size(0)`` (or reduction="sum"), then ``total / len(loader.dataset)``.
"""

from __future__ import annotations

import ast
import math

from torch_pitfalls.lint.bindings import LOADER_NAME, returned_values
from torch_pitfalls.lint.rules.base import UNSURE, Rule
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.rules.shared.losses import FUNCTIONAL_LOSSES
from torch_pitfalls.lint.walking import walk

MEAN, SUM = "mean", "sum"
BATCHES, SAMPLES = "batches", "samples"
_UNWRAP = ("item", "detach", "cpu", "float")
_WRAPPERS = ("enumerate", "tqdm", "iter")


def _strip(node):
    """``loss.item()``, ``loss.detach().cpu().item()``, ``float(loss)``, ``loss.data``: the loss."""
    while True:
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr in _UNWRAP
            and not node.args
        ):
            node = node.func.value
        elif isinstance(node, ast.Call) and getattr(node.func, "id", None) == "float" and len(node.args) == 1:
            node = node.args[0]
        elif isinstance(node, ast.Attribute) and node.attr == "data":
            node = node.value
        else:
            return node


def _reduction_of(call, default=MEAN):
    kw = next((k.value for k in call.keywords if k.arg == "reduction"), None)
    if kw is None:
        if any(k.arg in ("size_average", "reduce") or k.arg is None for k in call.keywords):
            return None
        return default
    if isinstance(kw, ast.Constant) and kw.value in (MEAN, SUM):
        return kw.value
    return None


def _loss_reduction(node, ctx, line: int, depth: int = 0):
    """MEAN or SUM for a scalar loss whose reduction the file shows; UNSURE for a loss (a criterion,
    a ``loss`` name) whose reduction it does not; None for what is not a loss."""
    if depth > 4:
        return None
    node = _strip(node)
    if isinstance(node, ast.Name):
        value = ctx.value_of(node, line)
        if value is None:
            return None
        return _loss_reduction(value, ctx, getattr(value, "lineno", line), depth + 1)
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func) or ""
    if q.startswith("torch.nn.functional.") and q.rsplit(".", 1)[-1] in FUNCTIONAL_LOSSES:
        return _reduction_of(node)
    if isinstance(node.func, ast.Call):  # nn.MSELoss()(out, y)
        inner = ctx.qualified(node.func.func) or ""
        return _reduction_of(node.func) if inner.startswith("torch.nn.") and inner.endswith("Loss") else None
    if isinstance(node.func, ast.Attribute) and node.func.attr in (MEAN, SUM) and not node.args and not node.keywords:
        return node.func.attr if ctx.qualified(node.func) is None else None  # (pred - y).pow(2).mean()
    held = ctx.held(node.func)
    if held is not None and held.kind == "loss":
        ctor = _constructor(node.func, ctx)
        if ctor is not None and (ctx.qualified(ctor.func) or "").startswith("torch.nn."):
            return _reduction_of(ctor) or UNSURE
        return UNSURE
    return None


def _constructor(func, ctx):
    if isinstance(func, ast.Name):
        value = ctx.value_of(func, func.lineno)
        return value if isinstance(value, ast.Call) else None
    if isinstance(func, ast.Attribute) and getattr(func.value, "id", None) == "self" and ctx.klass is not None:
        assigned = ctx.bindings.self_attributes(ctx.klass).get(func.attr) or []
        if len(assigned) == 1 and isinstance(assigned[0][1], ast.Call):
            return assigned[0][1]
    return None


def _batch_size_expr(node, ctx, line: int, depth: int = 0) -> bool:
    """A batch's size: ``x.size(0)``, ``x.shape[0]``, ``len(x)``, ``x.size()[0]``, a name bound to one,
    or a name that is the batch size (``batch_size``, ``bs``)."""
    if depth > 3:
        return False
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "size":
        return len(node.args) == 1 and isinstance(node.args[0], ast.Constant) and node.args[0].value == 0
    if isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Constant) and node.slice.value == 0:
        v = node.value
        return (isinstance(v, ast.Attribute) and v.attr == "shape") or (
            isinstance(v, ast.Call) and isinstance(v.func, ast.Attribute) and v.func.attr == "size" and not v.args
        )
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "len" and len(node.args) == 1:
        return not _is_dataset_len(node, ctx)
    if isinstance(node, (ast.Name, ast.Attribute)):
        name = getattr(node, "id", None) or getattr(node, "attr", "")
        if name.lower() in ("batch_size", "bs", "batchsize", "bsz", "n_batch_samples", "batch_len"):
            return True
        if isinstance(node, ast.Name):
            value = ctx.value_of(node, line)
            return value is not None and _batch_size_expr(value, ctx, line, depth + 1)
    return False


def _is_dataset_len(call, ctx) -> bool:
    arg = call.args[0]
    return isinstance(arg, ast.Attribute) and arg.attr in ("dataset", "sampler")


def _term(expr, ctx, line: int):
    """What one ``total += expr`` adds: MEAN (a mean loss), SUM (a loss weighted back to its batch's sum, or
    summed), UNSURE (a loss of unknown reduction), None (something else)."""
    expr = _strip(expr)
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        for a, b in ((expr.left, expr.right), (expr.right, expr.left)):
            if _batch_size_expr(b, ctx, line) and _loss_reduction(a, ctx, line) is not None:
                return SUM
        return None
    found = _loss_reduction(expr, ctx, line)
    if found is None and isinstance(expr, ast.Name) and _backpropagated(expr.id, ctx):
        return UNSURE  # loss.backward() proves it a scalar loss; its reduction is not shown
    return found


def _backpropagated(name: str, ctx) -> bool:
    return any(
        isinstance(n, ast.Call)
        and isinstance(n.func, ast.Attribute)
        and n.func.attr == "backward"
        and getattr(n.func.value, "id", None) == name
        for n in walk(ctx.function)
    )


def _loop_iterable(loop):
    it = loop.iter
    while (
        isinstance(it, ast.Call)
        and (getattr(it.func, "id", None) or getattr(it.func, "attr", None)) in _WRAPPERS
        and it.args
    ):
        it = it.args[0]
    return it


def _accumulations(name: str, fn):
    """Every ``name += expr`` in the function, with the innermost ``for`` loop around it."""
    out = []
    for loop in walk(fn):
        if not isinstance(loop, (ast.For, ast.AsyncFor)):
            continue
        for n in walk(loop):
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and getattr(n.target, "id", None) == name:
                out.append((n, loop))
    # keep the innermost loop of each statement
    best = {}
    for n, loop in out:
        if id(n) not in best or loop.lineno > best[id(n)][1].lineno:
            best[id(n)] = (n, loop)
    return list(best.values())


def _same(a, b) -> bool:
    return ast.dump(a) == ast.dump(b)


def _denominator(node, loop, ctx, fn):
    """BATCHES, SAMPLES or None for what the sum is divided by, read against the loop that accumulates it."""
    iterable = _loop_iterable(loop)
    if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "len" and len(node.args) == 1:
        arg = node.args[0]
        if _same(arg, iterable) and _loader_like(arg, ctx):
            return BATCHES
        if isinstance(arg, ast.Attribute) and arg.attr == "dataset" and _same(arg.value, iterable):
            return SAMPLES
        ctor = _loader_call(iterable, ctx)
        if ctor is not None and ctor.args and _same(ctor.args[0], arg):
            return SAMPLES
        return None
    if isinstance(node, ast.Name):
        steps = [
            n
            for n in walk(loop)
            if isinstance(n, ast.AugAssign) and isinstance(n.op, ast.Add) and getattr(n.target, "id", None) == node.id
        ]
        if not steps:
            return None
        if all(isinstance(s.value, ast.Constant) and s.value.value == 1 for s in steps):
            return BATCHES
        if all(_batch_size_expr(s.value, ctx, s.lineno) for s in steps):
            return SAMPLES
    return None


def _loader_like(node, ctx) -> bool:
    held = ctx.held(node)
    if held is not None:
        return held.kind == "loader"
    name = getattr(node, "id", None) or getattr(node, "attr", None)
    return bool(name) and LOADER_NAME.search(name) is not None


def _loader_call(node, ctx, depth: int = 0):
    """The ``DataLoader(...)`` call a loader expression was made by, where the file shows it."""
    if depth > 4:
        return None
    if isinstance(node, ast.Call):
        q = ctx.qualified(node.func) or ""
        return node if q.endswith(".DataLoader") else None
    if not isinstance(node, ast.Name):
        return None
    binding, where = ctx.bindings.lookup(node.id, ctx.chain(), getattr(node, "lineno", 1 << 30))
    if binding is None:
        return None
    if binding.how == "assign":
        return _loader_call(binding.value, ctx, depth + 1)
    if binding.how == "item" and binding.index is not None and isinstance(binding.value, ast.Call):
        fn = ctx.bindings._local_function(binding.value, where, binding.line)
        returned = returned_values(fn, binding.index) if fn is not None else None
        if returned and len(returned) == 1 and isinstance(returned[0][0], ast.Name):
            value = ctx.bindings.value_of(returned[0][0].id, (fn, ctx.module), returned[0][1] + 1)
            return _loader_call(value, ctx, depth + 1) if isinstance(value, ast.Call) else None
    return None


def _number(node, ctx, depth: int = 0):
    """An int or float the module fixes: a literal, a constant bound once, arithmetic of those."""
    if depth > 6 or node is None:
        return None
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        v = _number(node.operand, ctx, depth + 1)
        return -v if v is not None else None
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub, ast.Mult, ast.FloorDiv)):
        a, b = _number(node.left, ctx, depth + 1), _number(node.right, ctx, depth + 1)
        if a is None or b is None:
            return None
        if isinstance(node.op, ast.Add):
            return a + b
        if isinstance(node.op, ast.Sub):
            return a - b
        if isinstance(node.op, ast.Mult):
            return a * b
        return a // b if b else None
    if isinstance(node, ast.Name):
        values = _values(node.id, (ctx.module,), 1 << 30, ctx.bindings)
        if values and len(values) == 1 and not (isinstance(values[0], ast.Name) and values[0].id == node.id):
            return _number(values[0], ctx, depth + 1)
    return None


_SIZED = ("randn", "rand", "zeros", "ones", "empty", "full")


def _rows(node, ctx, scope, depth: int = 0):
    """The length of a tensor's first dimension (or a list's), where the module fixes it."""
    if depth > 6:
        return None
    if isinstance(node, ast.Name):
        value = ctx.bindings.value_of(node.id, scope, 1 << 30)
        return _rows(value, ctx, scope, depth + 1) if value is not None else None
    if isinstance(node, (ast.List, ast.Tuple)):
        return len(node.elts)
    if not isinstance(node, ast.Call):
        return None
    q = ctx.qualified(node.func) or ""
    if q in ("torch.arange",) or getattr(node.func, "id", None) == "range":
        nums = [_number(a, ctx) for a in node.args]
        if not nums or any(n is None for n in nums) or len(nums) > 3:
            return None
        start, stop, step = (0, nums[0], 1) if len(nums) == 1 else (nums[0], nums[1], nums[2] if len(nums) == 3 else 1)
        return max(0, math.ceil((stop - start) / step)) if step else None
    if q.startswith("torch.") and q.rsplit(".", 1)[-1] in _SIZED and node.args:
        first = node.args[0]
        first = first.elts[0] if isinstance(first, (ast.Tuple, ast.List)) and first.elts else first
        n = _number(first, ctx)
        return n if isinstance(n, int) else None
    if q == "torch.tensor" and node.args:
        return _rows(node.args[0], ctx, scope, depth + 1)
    if q == "torch.utils.data.TensorDataset" and node.args:
        return _rows(node.args[0], ctx, scope, depth + 1)
    if isinstance(node.func, ast.Attribute) and q == "":
        attr = node.func.attr
        if attr in ("float", "double", "long", "to", "cuda", "cpu", "clone", "detach"):
            return _rows(node.func.value, ctx, scope, depth + 1)
        if attr == "unsqueeze" and node.args and (_number(node.args[0], ctx) or 0) >= 1:
            return _rows(node.func.value, ctx, scope, depth + 1)
    return None


def _partial_last_batch(iterable, ctx) -> bool:
    """The loader's last batch is smaller than the others, as the module fixes it: a DataLoader over a
    dataset of known length with a known batch size that does not divide it, no drop_last, no sampler."""
    ctor = _loader_call(iterable, ctx)
    if ctor is None or not ctor.args:
        return False
    if any(k.arg in ("drop_last", "sampler", "batch_sampler") or k.arg is None for k in ctor.keywords):
        drop = next((k.value for k in ctor.keywords if k.arg == "drop_last"), None)
        if not (isinstance(drop, ast.Constant) and drop.value is False) or any(
            k.arg in ("sampler", "batch_sampler") or k.arg is None for k in ctor.keywords
        ):
            return False
    size = next((k.value for k in ctor.keywords if k.arg == "batch_size"), ctor.args[1] if len(ctor.args) > 1 else None)
    batch = _number(size, ctx) if size is not None else 1
    scope = _scopes_of(ctor, ctx)
    rows = _rows(ctor.args[0], ctx, scope)
    return isinstance(batch, int) and isinstance(rows, int) and batch > 0 and rows % batch != 0


def _averaged_wrong(node, ctx):
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
        total, count = node.left, node.right
    elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Div):
        total, count = node.target, node.value
    else:
        return False
    fn = ctx.function
    if not isinstance(total, ast.Name) or fn is None:
        return False
    steps = [(n, loop) for n, loop in _accumulations(total.id, fn) if n.lineno < node.lineno]
    if not steps:
        return False
    loops = {id(loop) for _, loop in steps}
    if len(loops) != 1 or any(_inside(node, loop, ctx) for _, loop in steps):
        return False  # a running figure printed inside the loop, or sums from several loops
    loop = steps[0][1]
    terms = {_term(n.value, ctx, n.lineno) for n, _ in steps}
    if len(terms) != 1:
        return False
    term = terms.pop()
    if term is None:
        return False
    denominator = _denominator(count, loop, ctx, fn)
    if denominator == SAMPLES and term in (MEAN, UNSURE):
        return True if term == MEAN else UNSURE
    if denominator == BATCHES and term == SUM:
        # a sum over each pass divided by the passes is wrong only where a pass is a batch: over
        # range(len(dataset)), one sample a pass, it is the per-sample mean (torchcp's set sizes)
        iterable = _loop_iterable(loop)
        return _loader_like(iterable, ctx) or _loader_call(iterable, ctx) is not None
    if denominator == BATCHES and term == MEAN:
        return _partial_last_batch(_loop_iterable(loop), ctx)
    return False


def _inside(node, loop, ctx) -> bool:
    up = ctx.parent(node)
    while up is not None:
        if up is loop:
            return True
        up = ctx.parent(up)
    return False


RULE = Rule(
    "PTF242",
    ("running-loss-averaged-wrong",),
    "the epoch's loss is averaged with the wrong denominator: a sum of per-batch mean losses divided by the "
    "number of samples (or per-sample-weighted losses by the number of batches, or batch means over a "
    "smaller last batch); add loss.item() * x.size(0) and divide by len(loader.dataset)",
    _averaged_wrong,
    nodes=(ast.BinOp, ast.AugAssign),
    needs=("len(", "+="),
)
