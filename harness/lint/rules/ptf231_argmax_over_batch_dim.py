"""What: argmax(0) (or max(0)) over a batch of per-example scores, (batch, classes), compared with the labels.
Why: Dimension 0 is the batch: for each class it returns the example that scored it highest, not each
example's class; the comparison with one label per example runs whenever the two counts agree (or the
batch has one example) and gives a plausible, wrong accuracy.
Fix: reduce over the classes, ``logits.argmax(dim=1)`` (``dim=-1`` when they come last).
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import arguments
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _method
from torch_pitfalls.lint.rules.shared.flow import _own_code, _scopes_of, _values, context_at
from torch_pitfalls.lint.walking import walk

# ops that keep a tensor's dimensions: what they are applied to is what is reduced
_KEEPS_SHAPE = (
    "detach",
    "cpu",
    "cuda",
    "to",
    "float",
    "double",
    "half",
    "clone",
    "contiguous",
    "softmax",
    "log_softmax",
    "sigmoid",
    "exp",
)
_KEEPS_SHAPE_FUNCTIONS = (
    "torch.softmax",
    "torch.log_softmax",
    "torch.sigmoid",
    "torch.nn.functional.softmax",
    "torch.nn.functional.log_softmax",
    "torch.sigmoid",
    "torch.exp",
)
_SEQUENCE_MODULES = (
    "RNN",
    "LSTM",
    "GRU",
    "MultiheadAttention",
    "Transformer",
    "TransformerEncoder",
    "TransformerDecoder",
    "TransformerEncoderLayer",
    "TransformerDecoderLayer",
)


def _reduction(node, ctx):
    """(scores, dim, returns a (values, indices) pair) of ``x.argmax(d)``, ``torch.argmax(x, d)``,
    ``x.max(d)``, ``torch.max(x, d)``; else None."""
    q = ctx.qualified(node.func)
    if q in ("torch.argmax", "torch.max") and node.args:
        dim = _arg(node, 1, "dim")
        return (node.args[0], dim, q == "torch.max") if dim is not None else None
    if q is None and _method(node, "argmax", "max"):
        dim = _arg(node, 0, "dim")
        return (node.func.value, dim, node.func.attr == "max") if dim is not None else None
    return None


def _is_zero(dim, ctx, line) -> bool:
    """The dimension is 0: a literal, or a name every value of which (its assignment, or what each call of
    the module passes for a parameter) is the literal 0."""
    if isinstance(dim, ast.Constant):
        return type(dim.value) is int and dim.value == 0
    if isinstance(dim, ast.Name):
        values = _values(dim.id, _scopes_of(dim, ctx), line, ctx.bindings)
        return bool(values) and all(
            isinstance(v, ast.Constant) and type(v.value) is int and v.value == 0 for v in values
        )
    return False


def _strip(expr, ctx):
    """The tensor under ops that keep its shape (``.detach()``, ``.cpu()``, ``F.softmax(x, dim=1)``, ``.data``)."""
    while True:
        if isinstance(expr, ast.Attribute) and expr.attr == "data":
            expr = expr.value
        elif isinstance(expr, ast.Call) and ctx.qualified(expr.func) in _KEEPS_SHAPE_FUNCTIONS and expr.args:
            expr = expr.args[0]
        elif _method(expr, *_KEEPS_SHAPE) and ctx.qualified(expr.func) is None:
            expr = expr.func.value
        else:
            return expr


def _assigned(expr, ctx, line):
    """A bare name to what it was assigned above ``line`` (a few steps, a plain ``=`` only)."""
    for _ in range(4):
        if not isinstance(expr, ast.Name):
            return expr, line
        binding, _where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None or binding.how != "assign":
            return expr, line
        expr, line = _strip(binding.value, ctx), binding.line
    return expr, line


def _literal_matrix(expr, ctx) -> bool:
    """A list of two or more rows of equal length (>= 2) written out, here or in a module constant."""
    if isinstance(expr, ast.Name):
        binding, _ = ctx.bindings.lookup(expr.id, ctx.chain(), getattr(expr, "lineno", 1 << 30))
        if binding is None or binding.how != "assign":
            return False
        expr = binding.value
    if not isinstance(expr, (ast.List, ast.Tuple)) or len(expr.elts) < 2:
        return False
    rows = expr.elts
    if not all(isinstance(r, (ast.List, ast.Tuple)) for r in rows):
        return False
    widths = {len(r.elts) for r in rows}
    return (
        len(widths) == 1
        and widths.pop() >= 2
        and all(isinstance(v, ast.Constant) and isinstance(v.value, (int, float)) for r in rows for v in r.elts)
    )


def _batch_input(expr, ctx, line) -> bool:
    """A batch: a loop's element over a DataLoader, or a part of one (``x, y = batch``, ``batch[0]``), or a
    run of rows cut from a tensor by a range that moves (``beats[start:start + bs]``), through
    ``.to(device)`` and the like."""
    for _ in range(5):
        expr = _strip(expr, ctx)
        if isinstance(expr, ast.Subscript):
            if _moving_rows(expr.slice):
                return True
            expr = expr.value
            continue
        if not isinstance(expr, ast.Name):
            return False
        binding, where = ctx.bindings.lookup(expr.id, ctx.chain(), line)
        if binding is None:
            return False
        if binding.how == "iter":
            held = ctx.held(expr, line)
            return held is not None and held.what == "batch"
        if binding.how in ("assign", "item") and binding.value is not None:
            expr, line = binding.value, binding.line
            continue
        return False
    return False


def _moving_rows(index) -> bool:
    """``start:start + bs`` (or ``i * bs:(i + 1) * bs``): rows taken a batch at a time, bounds not constant."""
    return (
        isinstance(index, ast.Slice)
        and index.lower is not None
        and index.upper is not None
        and not isinstance(index.lower, ast.Constant)
        and not isinstance(index.upper, ast.Constant)
        and index.step is None
    )


def _per_example_scores(expr, ctx, line) -> bool:
    """The scores are one row per example: a module's output on a DataLoader batch (not a sequence
    model's, whose outputs are (time, batch, ...) or a tuple), or a matrix of scores written out row by
    row (``torch.tensor([[...], [...]])``). Not a row of it (``out[0]``), a stack of several models'
    scores, a similarity matrix, or anything reshaped."""
    expr, line = _assigned(_strip(expr, ctx), ctx, line)
    if not isinstance(expr, ast.Call):
        return False
    q = ctx.qualified(expr.func)
    if q in ("torch.tensor", "torch.as_tensor", "torch.Tensor", "torch.FloatTensor") and expr.args:
        return _literal_matrix(expr.args[0], ctx)
    held = ctx.held(expr.func, line)
    if held is None or held.kind != "module" or not expr.args:
        return False
    if (held.what or "").rsplit(".", 1)[-1] in _SEQUENCE_MODULES:
        return False
    return _batch_input(expr.args[0], ctx, line)


def _predictions(node, pair: bool, ctx):
    """The expressions and names that hold the indices: the call (``.indices``/``[1]`` of a max), or the
    names bound to them (``preds = ...``, ``_, preds = torch.max(...)``)."""
    exprs, names = [], set()
    up = ctx.parent(node)
    if pair:
        if isinstance(up, ast.Subscript) and isinstance(up.slice, ast.Constant) and up.slice.value == 1:
            exprs.append(up)
        elif isinstance(up, ast.Attribute) and up.attr == "indices":
            exprs.append(up)
        elif isinstance(up, ast.Assign) and len(up.targets) == 1 and isinstance(up.targets[0], ast.Tuple):
            elts = up.targets[0].elts
            if len(elts) == 2 and isinstance(elts[1], ast.Name):
                names.add(elts[1].id)
            return exprs, names
        else:
            return exprs, names
    else:
        exprs.append(node)
    top = exprs[-1]
    while True:  # ``preds = logits.argmax(0).cpu()``: the chain the name is bound to
        attr = ctx.parent(top)
        call = ctx.parent(attr) if isinstance(attr, ast.Attribute) else None
        if not (
            _method(call, *_KEEPS_SHAPE, "long", "int", "view", "reshape", "squeeze", "flatten") and call.func is attr
        ):
            break
        top = call
    assign = ctx.parent(top)
    if isinstance(assign, ast.Assign) and len(assign.targets) == 1 and isinstance(assign.targets[0], ast.Name):
        names.add(assign.targets[0].id)
    names |= _collected(top, names, ctx)
    return exprs, names


_JOINS = ("cat", "concat", "concatenate", "stack", "hstack")


def _collected(top, names, ctx) -> set:
    """The lists the indices are appended to, batch after batch (``preds.append(logits.argmax(0).cpu())``), and
    the names bound to those lists joined (``preds = torch.cat(preds).numpy()``): the predictions too."""
    lists = set()
    call = ctx.parent(top)
    if (
        _method(call, "append")
        and len(call.args) == 1
        and call.args[0] is top
        and isinstance(call.func.value, ast.Name)
    ):
        lists.add(call.func.value.id)
    for n in walk(ctx.function):
        if _method(n, "append") and len(n.args) == 1 and isinstance(n.func.value, ast.Name):
            arg = n.args[0]
            while _method(arg, *_KEEPS_SHAPE, "long", "int", "tolist", "numpy", "item"):
                arg = arg.func.value
            if isinstance(arg, ast.Name) and arg.id in names:
                lists.add(n.func.value.id)
    joined = set()
    for n in walk(ctx.function):
        if not (isinstance(n, ast.Assign) and len(n.targets) == 1):
            continue
        target, value = n.targets[0], n.value
        pairs = (
            zip(target.elts, value.elts)
            if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple) and len(target.elts) == len(value.elts)
            else [(target, value)]
        )
        for name, made in pairs:
            while _method(made, *_KEEPS_SHAPE, "numpy", "tolist"):
                made = made.func.value
            if isinstance(name, ast.Name) and _joined_list(made) in lists:
                joined.add(name.id)
    return lists | joined


def _joined_list(expr) -> str | None:
    """The list a join (``torch.cat(preds)``, ``np.concatenate(preds)``) is made of, by name, or None."""
    if (
        isinstance(expr, ast.Call)
        and (getattr(expr.func, "attr", None) or getattr(expr.func, "id", None)) in _JOINS
        and expr.args
        and isinstance(expr.args[0], ast.Name)
    ):
        return expr.args[0].id
    return None


def _is_prediction(expr, exprs, names) -> bool:
    while _method(expr, *_KEEPS_SHAPE, "long", "int", "view", "view_as", "reshape", "squeeze", "flatten", "numpy"):
        expr = expr.func.value
    if _joined_list(expr) is not None:
        return _joined_list(expr) in names  # torch.cat(preds): the list of every batch's predictions, joined
    return any(expr is e for e in exprs) or (isinstance(expr, ast.Name) and expr.id in names)


def _compared_with_labels(node, exprs, names, ctx) -> bool:
    """The indices are compared element by element with a tensor of labels (``preds == y``, ``preds.eq(y)``,
    ``torch.eq(preds, y)``) in the function: per-example predictions."""
    for n in walk(ctx.function):
        if isinstance(n, ast.Compare) and len(n.ops) == 1 and isinstance(n.ops[0], (ast.Eq, ast.NotEq)):
            pair = (n.left, n.comparators[0])
        elif _method(n, "eq", "ne") and len(n.args) == 1:
            pair = (n.func.value, n.args[0])
        elif isinstance(n, ast.Call) and ctx.qualified(n.func) in ("torch.eq", "torch.ne") and len(n.args) == 2:
            pair = tuple(n.args)
        else:
            continue
        for mine, other in (pair, pair[::-1]):
            if _is_prediction(mine, exprs, names) and not isinstance(other, ast.Constant) and _own_code(n, ctx):
                return True
    return any(_zipped_with_labels(n, exprs, names, ctx) for n in walk(ctx.function))


def _zipped_with_labels(node, exprs, names, ctx) -> bool:
    """``for truth, guess in zip(labels[i:i + bs].tolist(), preds.tolist())``: the indices paired one by one
    with the batch's labels (a confusion matrix, a per-example tally)."""
    if not (isinstance(node, (ast.For, ast.comprehension)) and isinstance(node.iter, ast.Call)):
        return False
    if getattr(node.iter.func, "id", None) != "zip" or len(node.iter.args) != 2:
        return False
    args = [a.func.value if _method(a, "tolist", "numpy") else a for a in node.iter.args]
    return any(
        _is_prediction(mine, exprs, names) and _batch_input(other, ctx, node.iter.lineno)
        for mine, other in (args, args[::-1])
    )


def _argmax_over_batch(node, ctx) -> bool:
    found = _reduction(node, ctx)
    if found is None or ctx.function is None:
        return False
    scores, dim, pair = found
    line = node.lineno
    if not _is_zero(dim, ctx, line):
        return False
    if not _per_example_scores(scores, ctx, line):
        return not pair and _through_a_helper(node, scores, ctx)
    exprs, names = _predictions(node, pair, ctx)
    return bool(exprs or names) and _compared_with_labels(node, exprs, names, ctx)


def _through_a_helper(node, scores, ctx) -> bool:
    """``def decide(logits): return logits.argmax(0)``: a function of the module that returns the argmax of a
    parameter, which a call in the file hands per-example scores and whose result it compares with the labels
    (``preds.append(decide(model(x)).cpu())`` ... ``preds == labels``)."""
    fn = ctx.function
    if not (
        isinstance(scores, ast.Name)
        and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
        and ctx.bindings.module_function(fn.name) is fn
    ):
        return False
    binding, where = ctx.bindings.lookup(scores.id, ctx.chain(), node.lineno)
    if binding is None or binding.how != "param" or where[0] is not fn:
        return False
    top = node
    while _method(ctx.parent(ctx.parent(top)), *_KEEPS_SHAPE, "long", "int") and ctx.parent(top).value is top:
        top = ctx.parent(ctx.parent(top))
    if not isinstance(ctx.parent(top), ast.Return):
        return False
    for call, _chain, _klass in ctx.bindings.call_sites(fn.name):
        passed = arguments(call, fn).get(scores.id)
        caller = context_at(call, ctx)
        if passed is None or caller is None or caller.function is fn:
            continue
        if not _per_example_scores(passed, caller, call.lineno):
            continue
        exprs, names = _predictions(call, False, caller)
        if _compared_with_labels(call, exprs, names, caller):
            return True
    return False


RULE = Rule(
    "PTF231",
    ("argmax-over-batch-dim",),
    "argmax over dimension 0 of a batch of per-example scores (batch, classes) picks, for each class, the "
    "example that scored it highest, not each example's class, and the comparison with the labels gives a "
    "wrong accuracy; reduce over the classes: logits.argmax(dim=1) (dim=-1 when they come last)",
    _argmax_over_batch,
    nodes=CALL,
    needs=("argmax", "max("),
)
