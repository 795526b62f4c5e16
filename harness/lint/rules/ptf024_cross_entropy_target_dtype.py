"""What: A cross-entropy target that is a float tensor (a legacy constructor, or class labels cast to
float).
Why: Class indices must be int64: from 1.10 a float target is read as class probabilities, before that
it is an error.
Fix: use torch.tensor(labels) or .long().
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _is_call_to, _kw, _method
from torch_pitfalls.lint.rules.shared.batches import batch_sources, collated_return
from torch_pitfalls.lint.rules.shared.losses import _loss_call
from torch_pitfalls.lint.rules.shared.shapes import SCALAR, Shapes

_FLOAT_LEGACY = ("torch.Tensor", "torch.FloatTensor", "torch.DoubleTensor", "torch.cuda.FloatTensor")


def _float_class_target(node, ctx) -> bool:
    """cross_entropy whose target is built by a float legacy constructor (``torch.Tensor([1, 0])``):
    class indices as floats, read as probabilities (from 1.10) or refused."""
    if not _loss_call(node, ctx, "cross_entropy", "torch.nn.CrossEntropyLoss"):
        return False
    target = _arg(node, 1, "target")
    if target is None:
        return False
    value = ctx.resolve(target, node.lineno)
    cast = value.func.value if _float_cast(value) else None
    while _method(cast, "to", "cuda", "cpu", "contiguous"):  # labels.to(device).float(): still the labels
        cast = cast.func.value
    if cast is not None and (_has_ignore_index(node, ctx) or _loader_element(cast, ctx, value.lineno)):
        return True  # class indices (a loader's labels, or a loss told which index to ignore) cast to float
    while _method(value, "to", "cuda", "cpu") and not _method(value, "float", "double"):
        value = value.func.value
    if _is_call_to(value, ctx, *_FLOAT_LEGACY):
        return True
    return _float_batch_column(target, ctx, node.lineno) or _float_collated(value, ctx)


def _float_collated(value, ctx) -> bool:
    """A loader's labels that the file's collate function builds as floats: ``for x, y in loader`` with
    ``collate_fn=collate`` returning ``..., torch.Tensor(labels)`` (a legacy constructor makes float32)."""
    if not isinstance(value, ast.Name):
        return False
    found = collated_return(value.id, ctx.chain(), value.lineno, ctx)
    if found is None:
        return False
    expr, fn, at = found
    return _float_tensor(expr, (fn, ctx.module), at + 1, ctx)


def _float_batch_column(target, ctx, line) -> bool:
    """A loader's labels cut from a float tensor: ``for xb, yb in DataLoader(TensorDataset(X, y))`` where
    ``y = data[:, -1]`` of ``torch.tensor(frame.values, dtype=torch.float32)`` (shared/batches.py)."""
    if not isinstance(target, ast.Name):
        return False
    binding, where = ctx.bindings.lookup(target.id, ctx.chain(), line)
    for _ in range(3):  # y = y.to(device): the loader's y, moved
        value = binding.value if binding is not None and binding.how == "assign" else None
        if not (_method(value, "to", "cuda", "cpu") and getattr(value.func.value, "id", None) == target.id):
            break
        binding, where = ctx.bindings.lookup(target.id, where, binding.line)
    if binding is None or binding.how != "iter":
        return False
    sources = batch_sources(target.id, binding, where, ctx)
    return bool(sources) and all(_float_index(s, ctx) for s in sources)


def _float_index(source, ctx) -> bool:
    """One source of a batch's labels is float class indices: rows of a float tensor (a TensorDataset's), or a
    sample's one float number (``self.y[i]`` of a Dataset class, ``self.y`` a float column): stacked, (N,)."""
    if source.kind == "rows":
        return _float_tensor(source.expr, source.chain, source.line, ctx, klass=source.klass)
    one = Shapes(ctx).of(source.expr, source.chain, source.line, source.klass) == SCALAR or _column_element(
        source.expr, source, ctx
    )
    return one and _float_tensor(source.expr, source.chain, source.line, ctx, klass=source.klass)


def _column_element(expr, source, ctx) -> bool:
    """``self.y[i]`` where ``self.y`` is a column cut from a table (``torch.from_numpy(table[:, -1])``): one
    number per sample, whatever the table's size."""
    if not (isinstance(expr, ast.Subscript) and not isinstance(expr.slice, (ast.Slice, ast.Tuple))):
        return False
    made = expr.value
    if isinstance(made, ast.Attribute) and getattr(made.value, "id", None) == "self" and source.klass is not None:
        attrs = ctx.bindings.self_attributes(source.klass).get(made.attr) or []
        made = attrs[0][1] if len(attrs) == 1 else None
    while (
        isinstance(made, ast.Call)
        and made.args
        and (_is_call_to(made, ctx, "torch.from_numpy", "torch.tensor", "torch.as_tensor") or _float_cast(made))
    ):
        made = made.args[0] if not _float_cast(made) else made.func.value
    index = made.slice if isinstance(made, ast.Subscript) else None
    return (
        isinstance(index, ast.Tuple)
        and len(index.elts) == 2
        and isinstance(index.elts[0], ast.Slice)
        and index.elts[0].lower is None
        and index.elts[0].upper is None
        and isinstance(index.elts[1], (ast.Constant, ast.UnaryOp))
    )


def _float_tensor(expr, chain, line, ctx, depth=0, klass=None) -> bool:
    """The tensor is made float here: ``torch.tensor(x, dtype=torch.float32)``, a float cast, a legacy
    float constructor, a float NumPy array (``np.loadtxt``'s default), through names, ``self.`` attributes
    set once, rows or columns of it, and a function of this file's returns."""
    if depth > 8 or expr is None:
        return False
    if isinstance(expr, ast.Subscript):
        return _float_tensor(expr.value, chain, line, ctx, depth + 1, klass)
    if isinstance(expr, ast.Attribute) and getattr(expr.value, "id", None) == "self" and klass is not None:
        attrs = ctx.bindings.self_attributes(klass).get(expr.attr) or []
        return len(attrs) == 1 and _float_tensor(attrs[0][1], (attrs[0][0], ctx.module), attrs[0][2], ctx, depth + 1)
    if isinstance(expr, ast.Name):
        binding, where = ctx.bindings.lookup(expr.id, chain, line)
        if binding is None:
            return False
        if binding.how == "assign":
            return _float_tensor(binding.value, where, binding.line, ctx, depth + 1)
        if binding.how == "item" and binding.index is not None and isinstance(binding.value, ast.Call):
            fn = ctx.bindings._local_function(binding.value, where, binding.line)
            returns = returned_values(fn, binding.index) if fn is not None else None
            return bool(returns) and all(
                _float_tensor(v, (fn, ctx.module), at + 1, ctx, depth + 1) for v, at in returns
            )
        if binding.how == "param":  # a helper's argument: what every call of the file passes for it
            sites = ctx.bindings.passed(where[0], expr.id) or []
            return bool(sites) and all(_float_tensor(v, c, at, ctx, depth + 1) for v, c, at, _k in sites)
        return False
    return isinstance(expr, ast.Call) and _float_call(expr, chain, line, ctx, depth)


def _float_call(expr, chain, line, ctx, depth) -> bool:
    """A call that makes a float tensor or array (``_float_tensor``'s calls)."""
    if _float_cast(expr) or _is_call_to(expr, ctx, *_FLOAT_LEGACY):
        return True
    if _is_call_to(expr, ctx, "torch.tensor", "torch.as_tensor", "numpy.array", "numpy.asarray"):
        dtype = _kw(expr, "dtype")
        if dtype is None:  # torch.tensor(a) keeps a float array's dtype
            first = _arg(expr, 0, "data")
            return not _is_call_to(expr, ctx, "numpy.array", "numpy.asarray") and _float_tensor(
                first, chain, line, ctx, depth + 1
            )
        return _float_word(dtype, ctx)
    if _is_call_to(expr, ctx, "torch.from_numpy") and expr.args:
        return _float_tensor(expr.args[0], chain, line, ctx, depth + 1)
    if _method(expr, "astype") and expr.args:  # table.astype(np.float32)
        return _float_word(expr.args[0], ctx)
    if _is_call_to(expr, ctx, "numpy.loadtxt", "numpy.genfromtxt"):  # float64 unless told otherwise
        dtype = _kw(expr, "dtype")
        return dtype is None or _float_word(dtype, ctx)
    fn = ctx.bindings._local_function(expr, chain, line)  # table = read_table(path): what it returns
    returns = returned_values(fn) if fn is not None else None
    return bool(returns) and all(_float_tensor(v, (fn, ctx.module), at + 1, ctx, depth + 1) for v, at in returns)


def _float_word(dtype, ctx) -> bool:
    """A float dtype: ``torch.float32``, ``np.float32``, ``float``, ``"float32"``."""
    if isinstance(dtype, ast.Constant) and isinstance(dtype.value, str):
        return dtype.value in _FLOAT_WORDS
    if isinstance(dtype, ast.Name) and dtype.id == "float":
        return True
    return (ctx.qualified(dtype) or getattr(dtype, "attr", "")).rsplit(".", 1)[-1] in _FLOAT_WORDS


_FLOAT_WORDS = ("float", "float32", "float64", "double", "half", "float16", "bfloat16", "FloatTensor", "DoubleTensor")


def _float_cast(value) -> bool:
    """``t.float()``, ``t.to(torch.float32)``, ``t.to(device=d, dtype=torch.float)``, ``t.type(torch.FloatTensor)``."""
    if _method(value, "float", "double", "half"):
        return True
    if not _method(value, "to", "type"):
        return False
    dtype = _kw(value, "dtype")
    candidates = [dtype] if dtype is not None else list(value.args)
    return any(
        isinstance(c, (ast.Attribute, ast.Name)) and getattr(c, "attr", getattr(c, "id", "")) in _FLOAT_WORDS
        for c in candidates
    )


def _has_ignore_index(call, ctx) -> bool:
    """The loss was told an index to ignore: its targets are class indices by construction."""
    if _kw(call, "ignore_index") is not None:
        return True
    ctor = ctx.value_of(call.func, call.lineno) if isinstance(call.func, ast.Name) else None
    if (
        ctor is None
        and isinstance(call.func, ast.Attribute)
        and getattr(call.func.value, "id", None) == "self"
        and ctx.klass is not None
    ):
        attrs = ctx.bindings.self_attributes(ctx.klass).get(call.func.attr)
        ctor = attrs[0][1] if attrs else None
    return isinstance(ctor, ast.Call) and _kw(ctor, "ignore_index") is not None


def _loader_element(name, ctx, line) -> bool:
    """A name bound by unpacking a DataLoader's batch (``for imgs, masks in loader``): the dataset's labels."""
    if not isinstance(name, ast.Name):
        return False
    binding, _ = ctx.bindings.lookup(name.id, ctx.chain(), line)
    if binding is None or binding.how != "iter" or binding.value is None:
        return False
    held = ctx.held(name, line)  # a batch: of a DataLoader, or of a parameter named as one (bindings.py)
    return held is not None and held.what == "batch"


RULE = Rule(
    "PTF024",
    ("cross-entropy-target-dtype",),
    "the cross-entropy target is a float tensor (a legacy constructor, or class labels cast to float): "
    "class indices must be int64 (a float target is read as class probabilities from 1.10, an error "
    "before); use torch.tensor(labels) or .long()",
    _float_class_target,
    nodes=CALL,
    needs=("cross_entropy", "CrossEntropyLoss"),
)
