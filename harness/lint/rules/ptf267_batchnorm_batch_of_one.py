"""What: a model with a BatchNorm1d over (N, C) features (after a Linear) trained on a DataLoader whose batches can hold one
sample: batch_size=1 (or none given), or a dataset size that leaves a last batch of 1 without drop_last=True.
Why: in training mode BatchNorm needs more than one value per channel: F.batch_norm raises "Expected more than 1 value
per channel when training", at the first step or at the last batch of an epoch.
Fix: DataLoader(..., drop_last=True) (and a batch size above 1), or a norm that does not use the batch (LayerNorm).
"""

from __future__ import annotations

import ast
import re

from torch_pitfalls.lint.bindings import LOADERS, MODULE_SELF_METHODS, arguments, returned_values
from torch_pitfalls.lint.rules.base import CALL, Rule, _arg, _kw, _method
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.rules.shared.options import option_default
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step
from torch_pitfalls.lint.walking import kept_on, walk

_LINEAR = re.compile(r"^torch\.nn\.(modules\.linear\.)?(Lazy)?Linear$")
_BN1D = re.compile(r"^torch\.nn\.(modules\.batchnorm\.)?(Lazy)?BatchNorm1d$")
_SEQUENTIAL = ("torch.nn.Sequential", "torch.nn.modules.container.Sequential")
_FACTORIES = ("torch.randn", "torch.rand", "torch.zeros", "torch.ones", "torch.empty", "torch.randint", "torch.full")
_DATASETS = ("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset")


def _int(node, ctx, depth: int = 0) -> int | None:
    """The int a batch size or a length is, where the module shows it: a literal, a constant bound once,
    what every call site passes, a command-line option's default."""
    if depth > 6 or node is None:
        return None
    if isinstance(node, ast.Constant):
        return node.value if type(node.value) is int else None
    if isinstance(node, ast.Name):
        found = _values(node.id, _scopes_of(node, ctx), node.lineno, ctx.bindings)
        ints = {_int(v, ctx, depth + 1) if v is not node else None for v in found or ()}
        return ints.pop() if len(ints) == 1 else None
    if isinstance(node, ast.Attribute):
        default = option_default(node, ctx)
        return _int(default, ctx, depth + 1) if default is not None else None
    return None


def _false(node, ctx) -> bool:
    """``drop_last`` is off: not given, False, or a name every value of which is False."""
    if node is None:
        return True
    if isinstance(node, ast.Constant):
        return node.value is False
    if isinstance(node, ast.Name):
        found = _values(node.id, _scopes_of(node, ctx), node.lineno, ctx.bindings)
        return bool(found) and all(isinstance(v, ast.Constant) and v.value is False for v in found)
    return False


def _dataset_size(node, ctx) -> int | None:
    """The number of samples of a TensorDataset of tensors made here (``torch.randn(9, 4)``)."""
    if isinstance(node, ast.Name):
        node = ctx.bindings.value_of(node.id, _scopes_of(node, ctx), node.lineno)
    if not (isinstance(node, ast.Call) and ctx.qualified(node.func) in _DATASETS and node.args):
        return None
    first = node.args[0]
    if isinstance(first, ast.Name):
        first = ctx.bindings.value_of(first.id, _scopes_of(first, ctx), first.lineno)
    if not isinstance(first, ast.Call):
        return None
    q = ctx.qualified(first.func)
    if q == "torch.randint":
        size = first.args[2] if len(first.args) > 2 else _kw(first, "size")
        return _int(size.elts[0], ctx) if isinstance(size, (ast.Tuple, ast.List)) and size.elts else None
    if q in _FACTORIES and first.args:
        size = first.args[0]
        return _int(size.elts[0] if isinstance(size, (ast.Tuple, ast.List)) and size.elts else size, ctx)
    return None


def _batch_of_one(call, ctx) -> bool:
    """The loader yields a batch of one sample: always (batch_size 1, or none given), or as the last batch."""
    if any(k.arg is None for k in call.keywords) or _kw(call, "batch_sampler") is not None:
        return False
    if _kw(call, "sampler") is not None and _arg(call, 1, "batch_size") is None:
        return False
    size = _arg(call, 1, "batch_size")
    bs = 1 if size is None else _int(size, ctx)
    if bs == 1:
        return True
    if bs is None or bs < 2 or not _false(_arg(call, 8, "drop_last"), ctx):
        return False
    n = _dataset_size(_arg(call, 0, "dataset"), ctx)
    return n is not None and n % bs == 1


# --- the model: a BatchNorm1d over a Linear's (N, C) output ---------------------------------------
def _builders(expr, ctx, depth: int = 0) -> list:
    """The calls that built the module ``expr`` holds (through names, ``.to()``, the module's functions)."""
    if depth > 6:
        return []
    if isinstance(expr, ast.Call):
        if isinstance(expr.func, ast.Attribute) and expr.func.attr in MODULE_SELF_METHODS:
            return _builders(expr.func.value, ctx, depth + 1)
        if isinstance(expr.func, ast.Name):
            fn = ctx.bindings.module_function(expr.func.id)
            if fn is not None:
                return [c for v, _ in returned_values(fn) or [] for c in _builders(v, ctx, depth + 1)]
        return [expr]
    if isinstance(expr, ast.Name):
        scopes = _scopes_of(expr, ctx)
        binding, _ = ctx.bindings.lookup(expr.id, scopes, expr.lineno)
        if binding is not None and binding.how == "assign":
            return _builders(binding.value, ctx, depth + 1)
        if binding is not None and binding.how == "param":  # what the module's calls pass
            found = _values(expr.id, scopes, expr.lineno, ctx.bindings) or []
            return [c for v in found if not isinstance(v, ast.Name) for c in _builders(v, ctx, depth + 1)]
    return []


def _linear_then_bn1d(builder, ctx, seen=()) -> bool:
    """What ``builder`` builds applies a BatchNorm1d straight to a Linear's output: in a Sequential (its
    arguments or a list unpacked into it), or in a class of this file (its layers or its forward)."""
    if ctx.qualified(builder.func) in _SEQUENTIAL:
        return _pairs(builder.args, ctx)
    klass = ctx.bindings.classes().get(getattr(builder.func, "id", None))
    if klass is None or klass in seen or not ctx.bindings.is_module_class(klass):
        return False
    return kept_on(klass, "_ptf267_linear_bn", lambda k: [_class_has_pair(k, ctx, (*seen, k))])[0]


def _pairs(items, ctx) -> bool:
    calls = [ctx.qualified(e.func) or "" if isinstance(e, ast.Call) else "" for e in items]
    return any(_LINEAR.match(a) and _BN1D.match(b) for a, b in zip(calls, calls[1:]))


def _class_has_pair(klass, ctx, seen) -> bool:
    attrs = ctx.bindings.self_attributes(klass)

    def kind(attr) -> str:
        values = attrs.get(attr) or []
        qs = {ctx.qualified(v.func) or "" if isinstance(v, ast.Call) else "" for _m, v, _a in values}
        q = qs.pop() if len(qs) == 1 else ""
        return "linear" if _LINEAR.match(q) else "bn" if _BN1D.match(q) else ""

    def self_attr(call):
        f = call.func if isinstance(call, ast.Call) else None
        return f.attr if isinstance(f, ast.Attribute) and getattr(f.value, "id", None) == "self" else None

    for n in walk(klass):
        if isinstance(n, (ast.List, ast.Tuple)) and _pairs(n.elts, ctx):
            return True
        if not isinstance(n, ast.Call):
            continue
        if ctx.qualified(n.func) in _SEQUENTIAL and _pairs(n.args, ctx):
            return True
        outer = self_attr(n)
        if outer and n.args and kind(outer) == "bn":
            arg = n.args[0]
            if isinstance(arg, ast.Call) and kind(self_attr(arg) or "") == "linear":
                return True  # self.bn(self.fc(x))
        if isinstance(n.func, ast.Name) and n.func.id in ctx.bindings.classes() and _linear_then_bn1d(n, ctx, seen):
            return True
    for method in (m for m in klass.body if isinstance(m, ast.FunctionDef)):
        for body in (s.body for s in walk(method) if isinstance(getattr(s, "body", None), list)):
            for a, b in zip(body, body[1:]):  # x = self.fc(x); x = self.bn(x)
                if (
                    isinstance(a, ast.Assign)
                    and isinstance(b, ast.Assign)
                    and kind(self_attr(a.value) or "") == "linear"
                    and kind(self_attr(b.value) or "") == "bn"
                    and [getattr(t, "id", None) for t in a.targets] == [getattr(x, "id", 0) for x in b.value.args]
                ):
                    return True
    return False


# --- the loop that trains on the loader ---------------------------------------------------------------
def _loops_over(fn, name: str):
    """The for-loops of ``fn`` over the loader ``name`` (``for b in loader``, ``enumerate(loader)``, ``tqdm(loader)``)."""
    return [
        n
        for n in walk(fn)
        if isinstance(n, (ast.For, ast.AsyncFor))
        and any(isinstance(x, ast.Name) and x.id == name for x in walk(n.iter))
    ]


def _trains_bn_model(loop, fn, ctx) -> bool:
    """The loop calls a model with such a BatchNorm1d and trains (backward or an optimizer step), with the
    model not left in eval mode by the function."""
    calls = [n for n in walk(loop) if isinstance(n, ast.Call)]
    if not any(_method(n, "backward") or _optimizer_step(n, ctx) for n in calls):
        return False
    for call in calls:
        if not (isinstance(call.func, ast.Name) and call.args):
            continue
        held = ctx.bindings.held(call.func, _scopes_of(call.func, ctx), call.lineno)
        if held is None or held.kind != "module" or _evaluated(call.func.id, fn):
            continue
        if any(_linear_then_bn1d(b, ctx) for b in _builders(call.func, ctx)):
            return True
    return False


def _evaluated(name: str, fn) -> bool:
    """The function puts the model in eval mode and never back in train mode."""
    modes = [n for n in walk(fn) if _method(n, "eval", "train") and getattr(n.func.value, "id", None) == name]
    return any(n.func.attr == "eval" for n in modes) and not any(n.func.attr == "train" for n in modes)


def _loader_name(call, ctx) -> str | None:
    parent = ctx.parent(call)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        return parent.targets[0].id
    return None


def _function_of(node, ctx):
    up = ctx.parent(node)
    while up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef)):
        up = ctx.parent(up)
    return up if up is not None else ctx.module


def _bn_trained_on_one(node, ctx) -> bool:
    """A DataLoader whose batches can hold one sample, iterated (here, or in a module function it is handed
    to) by a loop that trains a model with a BatchNorm1d over a Linear's output."""
    if not (isinstance(node, ast.Call) and getattr(node.func, "attr", getattr(node.func, "id", "")) == "DataLoader"):
        return False
    if ctx.qualified(node.func) not in LOADERS or not _batch_of_one(node, ctx):
        return False
    name = _loader_name(node, ctx)
    if name is None:
        return False
    fn = _function_of(node, ctx)
    places = [(loop, fn) for loop in _loops_over(fn, name)]
    for call in walk(fn):  # train(model, loader, ...): the loops of that function over its parameter
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name):
            callee = ctx.bindings.module_function(call.func.id)
            if callee is None or callee is fn:
                continue
            for param, value in arguments(call, callee).items():
                if isinstance(value, ast.Name) and value.id == name:
                    places += [(loop, callee) for loop in _loops_over(callee, param)]
    return any(_trains_bn_model(loop, where, ctx) for loop, where in places)


RULE = Rule(
    "PTF267",
    ("batchnorm-batch-of-one",),
    "this DataLoader can give a batch of one sample (batch_size=1, or a last batch of 1 without drop_last=True) to a "
    "model trained with a BatchNorm1d over (N, C) features: in training mode BatchNorm raises 'Expected more than 1 "
    "value per channel'; use drop_last=True and a batch size above 1, or a norm that does not use the batch",
    _bn_trained_on_one,
    nodes=CALL,
    calls=("DataLoader",),
    needs=("BatchNorm1d",),
)
