"""What: the truth value of a tensor of many elements taken: ``if dones:`` on a mask the code also indexes with,
or a loss class called with the tensors (``nn.CrossEntropyLoss(outputs, labels)``, which makes them its options).
Why: "Boolean value of Tensor with more than one value is ambiguous" (RuntimeError).
Fix: say which truth: ``if dones.any():`` / ``.all()``; build the loss, then call it:
``nn.CrossEntropyLoss()(outputs, labels)``, or ``F.cross_entropy(outputs, labels)``.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.rules.base import Rule, _method
from torch_pitfalls.lint.rules.shared.flow import _assigned
from torch_pitfalls.lint.walking import kept_on, walk

_LOSSES = frozenset(
    """L1Loss MSELoss CrossEntropyLoss CTCLoss NLLLoss NLLLoss2d PoissonNLLLoss GaussianNLLLoss KLDivLoss BCELoss
BCEWithLogitsLoss MarginRankingLoss HingeEmbeddingLoss MultiLabelMarginLoss HuberLoss SmoothL1Loss SoftMarginLoss
MultiLabelSoftMarginLoss CosineEmbeddingLoss MultiMarginLoss TripletMarginLoss""".split()
)


_WEIGHT_FIRST = frozenset(
    "CrossEntropyLoss NLLLoss NLLLoss2d BCELoss BCEWithLogitsLoss MultiLabelSoftMarginLoss".split()
)


_VALUE_USES = ("backward", "item", "mean", "sum", "detach")


def _takes_tensor_at(loss: str, index: int) -> bool:
    """The constructor's positional parameter ``index`` may be a tensor: the class weights first, or
    MultiMarginLoss's third (``p, margin, weight``)."""
    return (loss in _WEIGHT_FIRST and index == 0) or (loss == "MultiMarginLoss" and index == 2)


def _model_output(expr, ctx) -> bool:
    """A model's output, directly or through one name: a call of what the bindings prove is a module,
    or ``self(x)``/``self.forward(x)`` in a method of a module class (a LightningModule's
    training_step). Never a loss's class weights."""
    value = _assigned(expr, ctx, getattr(expr, "lineno", 1 << 30))
    if not isinstance(value, ast.Call):
        return False
    f = value.func
    if ctx.kind(f) == "module":
        return True
    if ctx.klass is None or not ctx.bindings.is_module_class(ctx.klass):
        return False
    return getattr(f, "id", None) == "self" or (isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == "self")


def _used_as_value(call, ctx) -> bool:
    """What the constructor built is then used as a loss value: ``.backward()``/``.item()`` on it, or on
    the name it is bound to, or arithmetic with it."""
    parent = ctx.parent(call)
    if isinstance(parent, ast.Attribute) and parent.attr in _VALUE_USES:
        return True
    if isinstance(parent, ast.BinOp):
        return True
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name)):
        return False
    name = parent.targets[0].id
    for n in walk(ctx.function):
        if _method(n, *_VALUE_USES) and getattr(n.func.value, "id", None) == name:
            return True
        if isinstance(n, ast.BinOp) and any(getattr(s, "id", None) == name for s in (n.left, n.right)):
            return True
    return False


def _loss_class_given_tensors(node, ctx) -> bool:
    """``nn.CrossEntropyLoss(outputs, labels)``: the loss class called as if it were the loss. The
    tensors land in the constructor's options (``size_average``, ``reduce``), whose truth value is
    taken: "Boolean value of Tensor with more than one value is ambiguous" (or, with one-element
    tensors, a module where a loss was expected). Flagged where a positional argument the constructor
    never takes as a tensor is proven one, or the built object is then used as a value
    (``.backward()``, ``.item()``, arithmetic). The fix: build the loss, then call it:
    ``nn.CrossEntropyLoss()(outputs, labels)`` (or ``F.cross_entropy``)."""
    if not isinstance(node, ast.Call) or len(node.args) < 2 or any(isinstance(a, ast.Starred) for a in node.args):
        return False
    q = ctx.qualified(node.func) or ""
    loss = q.rsplit(".", 1)[-1]
    if not (q.startswith("torch.nn.") and loss in _LOSSES):
        return False
    for i, arg in enumerate(node.args):
        if _model_output(arg, ctx) or (not _takes_tensor_at(loss, i) and ctx.kind(arg) == "tensor"):
            return True
    if any(isinstance(a, ast.Constant) for a in node.args):
        return False  # nn.NLLLoss(weight, True): the old positional size_average
    return ctx.function is not None and _used_as_value(node, ctx)


_TRUTH_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def _tested(node):
    """The names whose truth a statement or expression takes: ``if x:``, ``while not x:``, ``a and x``."""
    test = node.test if isinstance(node, _TRUTH_TESTS) else None
    if isinstance(node, ast.BoolOp):
        return [v for v in node.values if isinstance(v, ast.Name)]
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        test = test.operand
    if isinstance(test, ast.BoolOp):
        return []  # each operand is offered as the BoolOp itself
    return [test] if isinstance(test, ast.Name) else []


def _indexes_with(name, fn, ctx) -> bool:
    """The function indexes a tensor with ``name`` as a mask: ``t[name.bool()]``, ``t[~name]``, or ``t[name]``
    where ``name`` holds a boolean tensor (a comparison, ``dtype=torch.bool``); ``t[i]`` with a count is an
    integer index, not a mask."""
    marked, plain = kept_on(fn, "_ptf204_indexes", _index_names)
    return name.id in marked or (name.id in plain and _boolean(name, ctx))


def _index_names(fn) -> tuple[frozenset, frozenset]:
    """The names the function indexes with (``t[~alive, -1]`` counts): those marked as masks (``.bool()``, ``~``),
    and the plain ones. Read once per function."""
    marked, plain = set(), set()
    for n in walk(fn):
        if not isinstance(n, ast.Subscript):
            continue
        for index in n.slice.elts if isinstance(n.slice, ast.Tuple) else [n.slice]:
            mark = False
            if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.Invert):
                index, mark = index.operand, True
            if _method(index, "bool", "byte") and not index.args:
                index, mark = index.func.value, True
            if isinstance(index, ast.Name):
                (marked if mark else plain).add(index.id)
    return frozenset(marked), frozenset(plain)


def _boolean(name: ast.Name, ctx, depth: int = 0) -> bool:
    """Every value ``name`` holds (its assignments here, or what every call passes for a parameter) is a boolean
    tensor: a comparison, a ``dtype=torch.bool`` factory or conversion, ``.bool()``, ``~``/``&``/``|`` of them."""
    binding, where = ctx.bindings.lookup(name.id, ctx.chain(), name.lineno)
    if binding is None:
        return False
    if binding.how == "param":
        values = ctx.bindings.passed_values(name.id, ctx.chain(), name.lineno) or []
    else:
        values = [binding.value] if binding.how == "assign" else []
    return bool(values) and all(_boolean_value(v, depth) for v in values)


def _boolean_value(value, depth: int) -> bool:
    if depth > 4 or value is None:
        return False
    if isinstance(value, ast.Compare):
        return True
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Invert):
        return _boolean_value(value.operand, depth + 1) or isinstance(value.operand, ast.Name)
    if isinstance(value, ast.BinOp) and isinstance(value.op, (ast.BitAnd, ast.BitOr)):
        return _boolean_value(value.left, depth + 1) or _boolean_value(value.right, depth + 1)
    if isinstance(value, ast.Call):
        if _method(value, "bool") and not value.args:
            return True
        dtype = next((k.value for k in value.keywords if k.arg == "dtype"), None)
        return getattr(dtype, "attr", None) == "bool"
    return False


def _mask_truth(node, ctx) -> bool:
    """``if dones:`` where ``dones`` holds a tensor (the bindings: here, or what every call of the function
    passes) and the function also indexes with it as a mask: a tensor of many elements, whose truth is
    ambiguous. A tensor tested only for truth may have one element (a 0-dim comparison): quiet."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    return any(_indexes_with(t, fn, ctx) and ctx.kind(t) == "tensor" for t in _tested(node))


def _truth_of_many_elements(node, ctx) -> bool:
    if isinstance(node, ast.Call):
        return _loss_class_given_tensors(node, ctx)
    return _mask_truth(node, ctx)


RULE = Rule(
    "PTF204",
    ("bool-of-multielement-tensor",),
    "the truth value of a tensor of many elements is ambiguous (RuntimeError): test a mask with .any() or "
    ".all(); a loss class called with the tensors makes them its options (size_average, reduce): build the "
    "loss first, then call it: nn.CrossEntropyLoss()(outputs, labels) or F.cross_entropy(outputs, labels)",
    _truth_of_many_elements,
    nodes=(ast.Call, *_TRUTH_TESTS, ast.BoolOp),
)
