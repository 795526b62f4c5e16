"""What a batch from a DataLoader is made of, as rules read it: for a name a loop over a loader binds
(``for x, y in loader``), the per-sample expressions its element comes from: what a Dataset class of the
file returns from ``__getitem__`` (the default collate stacks them), or a tensor a TensorDataset is built
from (a batch of its rows). One reader for the rules that ask what a target or an input is."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _arg, _const, _kw
from torch_pitfalls.lint.walking import walk

LOADERS = ("torch.utils.data.DataLoader", "torch.utils.data.dataloader.DataLoader")
TENSOR_DATASETS = ("torch.utils.data.TensorDataset", "torch.utils.data.dataset.TensorDataset")
_STACKS = ("torch.stack", "torch.tensor", "torch.as_tensor", "torch.LongTensor", "torch.FloatTensor")


@dataclass(frozen=True)
class Source:
    """One expression a batch element is made of: ``sample`` (one sample's value, stacked into a batch) or
    ``rows`` (a tensor whose rows are the batch), read in ``chain`` at ``line`` (``klass``: the class it is in)."""

    kind: str
    expr: ast.AST
    chain: tuple
    line: int
    klass: ast.ClassDef | None


def batch_sources(name: str, binding, where, ctx) -> list[Source] | None:
    """The sources of the element ``name`` of a ``for ... in loader`` target (``binding`` its "iter"
    binding, ``where`` the scopes it is bound in), through a loader handed as a parameter (every call's
    loader) and a collate function of the file that stacks a sample's field; None where not known."""
    loop = next(
        (n for n in walk(where[0]) if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == binding.line), None
    )
    if loop is None:
        return None
    target, iterable = loop.target, loop.iter
    if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", None) == "enumerate" and iterable.args:
        iterable = iterable.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    if not isinstance(target, ast.Tuple):
        return None
    index = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name), None)
    if index is None:
        return None
    return _loader_sources(iterable, index, where, binding.line, ctx, 0)


def _loader_sources(iterable, index, chain, line, ctx, depth) -> list[Source] | None:
    b = ctx.bindings
    if isinstance(iterable, ast.Name) and depth < 3:
        held, owner = b.lookup(iterable.id, chain, line)
        if held is not None and held.how == "param":  # run_epoch(model, loader): the loaders its calls pass
            sites = b.passed(owner[0], iterable.id) or []
            out = []
            for value, caller, at, _klass in sites:
                found = _loader_sources(value, index, caller, at, ctx, depth + 1)
                if found is None:
                    return None
                out += found
            return out or None
    loader = _call_of(iterable, chain, line, ctx)
    if loader is None or ctx.qualified(loader.func) not in LOADERS or _const(_kw(loader, "batch_size"), None):
        return None
    collate = _kw(loader, "collate_fn")
    if collate is not None:
        index = _collated_field(collate, index, ctx)
        if index is None:
            return None
    dataset = _call_of(_arg(loader, 0, "dataset"), chain, loader.lineno, ctx)
    if dataset is None:
        return None
    cls = b.classes().get(getattr(dataset.func, "id", None) or "")
    if cls is not None:
        getitem = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__getitem__"), None)
        returns = returned_values(getitem, index) if getitem is not None else None
        if not returns:
            return None
        return [Source("sample", v, (getitem, b.tree), at + 1, cls) for v, at in returns]
    if ctx.qualified(dataset.func) in TENSOR_DATASETS:
        args = dataset.args
        if any(isinstance(a, ast.Starred) for a in args) or len(args) <= index:
            return None
        return [Source("rows", args[index], chain, dataset.lineno, None)]
    return None


def _collated_field(collate, index, ctx) -> int | None:
    """The sample's field that element ``index`` of what a collate function of the file returns stacks:
    ``ids, targets = zip(*batch); return torch.cat(ids), offsets, torch.stack(targets)`` -> element 2 is
    field 1. None where the function does not show it."""
    fn = ctx.bindings.module_function(collate.id) if isinstance(collate, ast.Name) else None
    returns = returned_values(fn, index) if fn is not None else None
    if not returns or len(returns) != 1:
        return None
    value = returns[0][0]
    if isinstance(value, ast.Call) and ctx.qualified(value.func) in _STACKS and len(value.args) == 1:
        value = value.args[0]
    if not isinstance(value, ast.Name):
        return None
    for n in walk(fn):
        if (
            isinstance(n, ast.Assign)
            and len(n.targets) == 1
            and isinstance(n.targets[0], ast.Tuple)
            and isinstance(n.value, ast.Call)
            and getattr(n.value.func, "id", None) == "zip"
            and len(n.value.args) == 1
            and isinstance(n.value.args[0], ast.Starred)
        ):
            names = [getattr(e, "id", None) for e in n.targets[0].elts]
            if value.id in names:
                return names.index(value.id)
    return None


def _call_of(node, chain, line, ctx):
    for _ in range(4):
        if isinstance(node, ast.Name):
            node = ctx.bindings.value_of(node.id, chain, line)
        else:
            break
    return node if isinstance(node, ast.Call) else None
