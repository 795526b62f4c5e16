"""What: CrossEntropyLoss (F.cross_entropy) trained on multi-hot targets, rows with several 1s (several labels).
Why: CE is one softmax over the classes: a multi-hot row is read as class probabilities, the labels of a sample
share one unit of probability, each stays at 1/k, and a threshold of 0.5 predicts none of them; no error.
Fix: labels that are not exclusive are independent yes/no questions: nn.BCEWithLogitsLoss, decoded with
sigmoid(logits) > threshold.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg
from torch_pitfalls.lint.rules.shared.batches import batch_sources
from torch_pitfalls.lint.rules.shared.flow import _scopes_of
from torch_pitfalls.lint.walking import kept_on, walk

_CE = "torch.nn.CrossEntropyLoss"
_KEEP = frozenset("to cuda cpu float double half bfloat16 contiguous clone detach type".split())
_CONVERT = frozenset("tensor as_tensor from_numpy FloatTensor Tensor DoubleTensor asarray array stack".split())
_LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")


def _ce_pair(node, ctx):
    """(prediction, target) of a cross-entropy call, or None."""
    if ctx.qualified(node.func) == "torch.nn.functional.cross_entropy":
        return _arg(node, 0, "input"), _arg(node, 1, "target")
    if isinstance(node.func, ast.Call):
        found = ctx.qualified(node.func.func) == _CE
    elif isinstance(node.func, (ast.Name, ast.Attribute)):
        held = ctx.held(node.func)
        found = held is not None and held.kind == "loss" and held.what == _CE
    else:
        found = False
    return (_arg(node, 0, "input"), _arg(node, 1, "target")) if found else None


class _MultiHot:
    """Whether an expression holds multi-hot rows, as the code shows them built."""

    def __init__(self, ctx):
        self.ctx, self.b = ctx, ctx.bindings

    def of(self, node, chain, line, klass, d=0) -> bool:  # noqa: C901 - one branch per kind of expression
        if node is None or d > 12:
            return False
        d += 1
        if isinstance(node, ast.Name):
            binding, where = self.b.lookup(node.id, chain, line)
            if binding is None:
                return False
            if binding.how == "assign":
                value = binding.value
                if _zeros(value, self.ctx) and _multi_index_filled(node.id, binding, where[0], self.ctx):
                    return True
                return self.of(value, where, binding.line, klass, d)
            if binding.how == "iter":
                return self._batch_element(node.id, binding, where, klass, d)
            if binding.how == "item" and isinstance(binding.value, ast.Call) and binding.index is not None:
                q = self.ctx.qualified(binding.value.func) or ""  # x_tr, x_va, y_tr, y_va = train_test_split(x, y)
                split = binding.value.args
                if q.endswith("train_test_split") and len(split) > binding.index // 2:
                    return self.of(split[binding.index // 2], where, binding.line, klass, d)
                fn = self.b._local_function(binding.value, where, binding.line)  # names, y = encode(...)
                values = returned_values(fn, binding.index) if fn is not None else None
                return bool(values) and all(self.of(v, (fn, self.b.tree), at + 1, None, d) for v, at in values)
            if binding.how == "param":  # Dataset(texts, targets): what every construction passes
                sites = self.b.passed(where[0], node.id) or []
                return bool(sites) and all(self.of(v, caller, at, owner, d) for v, caller, at, owner in sites)
            return False
        if isinstance(node, (ast.List, ast.Tuple)):
            return _multi_hot_literal(node)
        if isinstance(node, ast.Subscript):  # Y[idx]: rows of a multi-hot matrix
            return self.of(node.value, chain, line, klass, d)
        if isinstance(node, ast.Attribute) and node.attr in ("values", "data"):
            return self.of(node.value, chain, line, klass, d)
        if isinstance(node, ast.Attribute) and getattr(node.value, "id", None) == "self" and klass is not None:
            attrs = self.b.self_attributes(klass).get(node.attr) or []  # self.targets, set once
            return len(attrs) == 1 and self.of(attrs[0][1], (attrs[0][0], self.b.tree), attrs[0][2], klass, d)
        if not isinstance(node, ast.Call):
            return False
        q = self.ctx.qualified(node.func) or ""
        last = q.rsplit(".", 1)[-1]
        if q == "torch.randint":  # torch.randint(0, 2, (n, c)): a random 0/1 matrix
            return (
                len(node.args) == 3
                and _number(node.args[0]) == 0
                and _number(node.args[1]) == 2
                and isinstance(node.args[2], (ast.Tuple, ast.List))
                and len(node.args[2].elts) == 2
            )
        if q.startswith(("torch.", "numpy.")) and last in _CONVERT and node.args:
            return self.of(node.args[0], chain, line, klass, d)
        if isinstance(node.func, ast.Attribute) and not q:
            attr, receiver = node.func.attr, node.func.value
            if attr in _KEEP or attr == "astype":
                return self.of(receiver, chain, line, klass, d)
            if attr in ("fit_transform", "transform"):
                return self._binarizer(receiver, chain, line)
        return False

    def _binarizer(self, node, chain, line) -> bool:
        if isinstance(node, ast.Name):
            node = self.b.value_of(node.id, chain, line)
        return isinstance(node, ast.Call) and (self.ctx.qualified(node.func) or "").endswith(
            "preprocessing.MultiLabelBinarizer"
        )

    def _batch_element(self, name, binding, where, klass, d) -> bool:
        """``for x, y in DataLoader(Tags(...))``: element ``i`` of what the dataset class's ``__getitem__``
        returns (stacked by the collate), or the rows of a TensorDataset's tensor (shared/batches.py)."""
        sources = batch_sources(name, binding, where, self.ctx)
        return bool(sources) and all(
            self.of(s.expr, s.chain, s.line, s.klass if s.kind == "sample" else klass, d) for s in sources
        )


def _zeros(value, ctx) -> bool:
    q = ctx.qualified(value.func) if isinstance(value, ast.Call) else None
    return q in ("torch.zeros", "torch.zeros_like", "numpy.zeros", "numpy.zeros_like")


def _one(node) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float) and node.value == 1


def _multi_index_filled(name, binding, function, ctx) -> bool:
    """After ``t = torch.zeros(...)``, 1 is written at several indices of ``t``: ``t[[...]] = 1``, ``t[labels] = 1``
    with a list of labels, or ``t[i] = 1`` in a loop that runs after the zeros (one label per turn)."""
    for node in walk(function):
        if not (
            isinstance(node, ast.Assign)
            and node.lineno > binding.line
            and _one(node.value)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Subscript)
            and getattr(node.targets[0].value, "id", None) == name
        ):
            continue
        index = node.targets[0].slice
        last = index.elts[-1] if isinstance(index, ast.Tuple) and index.elts else index
        if isinstance(last, (ast.List, ast.ListComp)) or (
            isinstance(last, ast.Call) and getattr(last.func, "id", None) == "list"
        ):
            return True
        if isinstance(last, ast.Name) and isinstance(
            ctx.bindings.value_of(last.id, (function,), node.lineno), (ast.List, ast.ListComp)
        ):
            return True
        if isinstance(index, ast.Tuple) and _columns_of_one_row(node, index, function, ctx):
            return True
        if isinstance(index, ast.Tuple) or not _one_dim(binding.value):
            continue  # ``t[i, y] = 1`` in a loop over the samples: one label per row, a one-hot matrix
        up = ctx.parent(node)
        while up is not None and up is not function:
            if isinstance(up, (ast.For, ast.While)):
                if not (up.lineno <= binding.line <= up.end_lineno):
                    return True
                break
            up = ctx.parent(up)
    return False


def _columns_of_one_row(assign, index, function, ctx) -> bool:
    """``t[row, col] = 1`` in a loop whose variable picks the column and not the row (``for g in genres_of_row:
    t[row, index[g]] = 1``): several columns of one row set to 1."""
    row_names = {n.id for e in index.elts[:-1] for n in walk(e) if isinstance(n, ast.Name)}
    column_names = {n.id for n in walk(index.elts[-1]) if isinstance(n, ast.Name)}
    up = ctx.parent(assign)
    while up is not None and up is not function:
        if isinstance(up, ast.For):
            loop_names = {n.id for n in walk(up.target) if isinstance(n, ast.Name)}
            return bool(loop_names & column_names) and not loop_names & row_names and bool(row_names)
        up = ctx.parent(up)
    return False


def _one_dim(zeros) -> bool:
    """``torch.zeros(n_labels)``: one row (``zeros_like`` and sizes given as tuples may be anything)."""
    name = getattr(zeros.func, "attr", getattr(zeros.func, "id", ""))
    return (
        name == "zeros" and len(zeros.args) == 1 and not isinstance(zeros.args[0], (ast.Tuple, ast.List, ast.Starred))
    )


def _number(node):
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    return None


def _multi_hot_literal(node) -> bool:
    """Rows of 0s and 1s, one of them with two 1s or more (not one-hot rows, not probabilities)."""
    rows = [e.elts for e in node.elts if isinstance(e, (ast.List, ast.Tuple))]
    if len(rows) != len(node.elts) or not rows:
        return False
    values = [[_number(v) for v in row] for row in rows]
    if any(v not in (0, 1) for row in values for v in row):
        return False
    return any(sum(row) >= 2 for row in values)


def _sigmoid_threshold_models(ctx) -> set:
    """The module classes (of this file) whose outputs the file decodes with ``sigmoid(out) > threshold``."""

    def find(tree):
        found = set()
        for node in walk(tree):
            if not (
                isinstance(node, ast.Compare)
                and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Gt, ast.GtE))
                and isinstance(node.left, ast.Call)
            ):
                continue
            call = node.left
            name = call.func.attr if isinstance(call.func, ast.Attribute) else getattr(call.func, "id", "")
            if name != "sigmoid":
                continue
            inner = (
                call.func.value if not call.args and isinstance(call.func, ast.Attribute) else (call.args or [None])[0]
            )
            chain = _scopes_of(node, ctx)
            if isinstance(inner, ast.Name):
                inner = ctx.bindings.value_of(inner.id, chain, node.lineno)
            if isinstance(inner, ast.Call):
                held = ctx.bindings.held(inner.func, chain, node.lineno, _class_of(node, ctx))
                if held is not None and held.kind == "module" and held.what in ctx.bindings.classes():
                    found.add(held.what)
        return found

    return kept_on(ctx.module, "_ptf240_sigmoid_decoded", lambda tree: frozenset(find(tree)))


def _class_of(node, ctx):
    up = ctx.parent(node)
    while up is not None:
        if isinstance(up, ast.ClassDef):
            return up
        up = ctx.parent(up)
    return None


def _multilabel_ce(node, ctx) -> bool:
    if ctx.function is None:
        return False
    pair = _ce_pair(node, ctx)
    if pair is None or pair[1] is None:
        return False
    pred, target = pair
    if _MultiHot(ctx).of(target, ctx.chain(), node.lineno, ctx.klass):
        return True
    if isinstance(pred, ast.Name):
        pred = ctx.value_of(pred, node.lineno)
    if not isinstance(pred, ast.Call):
        return False
    held = ctx.held(pred.func)
    return (
        held is not None
        and held.kind == "module"
        and held.what in ctx.bindings.classes()
        and held.what in _sigmoid_threshold_models(ctx)
    )


RULE = Rule(
    "PTF240",
    ("multilabel-with-cross-entropy",),
    "CrossEntropyLoss on multi-hot targets (several labels per sample): one softmax makes the labels share "
    "one unit of probability, so none of a sample's labels passes 0.5; use nn.BCEWithLogitsLoss and decode "
    "with sigmoid(logits) > threshold",
    _multilabel_ce,
    nodes=CALL,
    needs=("ross_entropy", "rossEntropy"),
)
