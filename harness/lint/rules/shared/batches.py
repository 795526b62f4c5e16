"""What a batch from a DataLoader is made of, as rules read it: for a name a loop over a loader binds
(``for x, y in loader``), the per-sample expressions its element comes from: what a Dataset class of the
file returns from ``__getitem__`` (the default collate stacks them), or a tensor a TensorDataset is built
from (a batch of its rows). One reader for the rules that ask what a target or an input is."""

from __future__ import annotations

import ast
from dataclasses import dataclass

from torch_pitfalls.lint.bindings import returned_values
from torch_pitfalls.lint.rules.base import _arg, _const, _kw, _method
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
    found = loop_element(name, binding, where)
    if found is None or found[1] is None:
        return None
    iterable, index, _line = found
    return _loader_sources(iterable, index, where, binding.line, ctx, 0)


def loop_element(name: str, binding, where):
    """(the iterable, the position of ``name`` in the loop's target or None for the whole element, the loop's
    line) for a name an ``iter`` binding binds (``for x, y in loader``, ``for i, batch in enumerate(loader)``,
    ``for batch in loader``); None where the loop's target does not name it plainly."""
    loop = next(
        (n for n in walk(where[0]) if isinstance(n, (ast.For, ast.AsyncFor)) and n.lineno == binding.line), None
    )
    if loop is None:
        return None
    target, iterable = _without_enumerate(loop)
    if isinstance(target, ast.Name) and target.id == name:
        return iterable, None, loop.lineno
    if not isinstance(target, ast.Tuple):
        return None
    index = next((i for i, e in enumerate(target.elts) if isinstance(e, ast.Name) and e.id == name), None)
    return (iterable, index, loop.lineno) if index is not None else None


def _without_enumerate(loop):
    """(target, iterable) of a for loop, looking through ``enumerate``: ``for i, (x, y) in enumerate(items)`` ->
    ``(x, y)``, ``items`` (None for the target where it does not unpack a pair)."""
    target, iterable = loop.target, loop.iter
    if isinstance(iterable, ast.Call) and getattr(iterable.func, "id", None) == "enumerate" and iterable.args:
        iterable = iterable.args[0]
        target = target.elts[1] if isinstance(target, ast.Tuple) and len(target.elts) == 2 else None
    return target, iterable


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
    cls = _dataset_class(_arg(loader, 0, "dataset"), chain, loader.lineno, ctx)
    if cls is not None:
        getitem = next((m for m in cls.body if isinstance(m, ast.FunctionDef) and m.name == "__getitem__"), None)
        returns = returned_values(getitem, index) if getitem is not None else None
        if not returns:
            return None
        return [Source("sample", v, (getitem, b.tree), at + 1, cls) for v, at in returns]
    made = _calls_making(_arg(loader, 0, "dataset"), chain, loader.lineno, ctx)
    if not made or any(ctx.qualified(dataset.func) not in TENSOR_DATASETS for dataset, _ in made):
        return None
    out = []
    for dataset, where in made:
        args = dataset.args
        if any(isinstance(a, ast.Starred) for a in args) or len(args) <= index:
            return None
        out.append(Source("rows", args[index], where, dataset.lineno, None))
    return out


def _calls_making(node, chain, line, ctx, depth=0) -> list | None:
    """(call, its scopes) for every call whose result ``node`` holds: through plain names, a tuple element
    a function of this file returns (``train_set, stats = load_table(path)``) and that function's returns
    (``train_set = to_dataset(table)``); None where one cannot be told."""
    b = ctx.bindings
    if depth > 6:
        return None
    if isinstance(node, ast.Name):
        binding, where = b.lookup(node.id, chain, line)
        if binding is None:
            return None
        if binding.how == "assign":
            return _calls_making(binding.value, where, binding.line, ctx, depth + 1)
        if binding.how == "item" and binding.index is not None and isinstance(binding.value, ast.Call):
            fn = b._local_function(binding.value, where, binding.line)
            return _returned_calls(fn, binding.index, ctx, depth) if fn is not None else None
        return None
    if not isinstance(node, ast.Call):
        return None
    fn = b._local_function(node, chain, line)
    return _returned_calls(fn, None, ctx, depth) if fn is not None else [(node, chain)]


def _returned_calls(fn, index, ctx, depth) -> list | None:
    returns = returned_values(fn, index)
    if not returns:
        return None
    out = []
    for value, at in returns:
        found = _calls_making(value, (fn, ctx.bindings.tree), at + 1, ctx, depth + 1)
        if found is None:
            return None
        out += found
    return out


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


_SUBSETS = ("torch.utils.data.Subset", "torch.utils.data.dataset.Subset")
_SPLITS = ("torch.utils.data.random_split", "torch.utils.data.dataset.random_split")
_MOVES = ("to", "cuda", "pin_memory")


def batch_field_sources(expr, chain, line, ctx) -> list[Source] | None:
    """The sources of one field of a whole batch, ``batch.y`` or ``batch["y"]``, where ``batch`` is the element
    of a loop over a loader (``for batch in loader``, also after ``batch = batch.to(device)``): what a collate
    function of the file puts in that field (a class of the file, a dataclass or NamedTuple built from the
    per-sample values it stacks, or a dict), or, with the default collate, the key of the dict the Dataset's
    ``__getitem__`` returns. None where the code does not show it."""
    if isinstance(expr, ast.Attribute):
        key, base = expr.attr, expr.value
    elif isinstance(expr, ast.Subscript) and isinstance(expr.slice, ast.Constant) and isinstance(expr.slice.value, str):
        key, base = expr.slice.value, expr.value
    else:
        return None
    found = _loop_over(base, chain, line, ctx)
    if found is None:
        return None
    iterable, where, at = found
    loader, loader_chain = _dataloader(iterable, where, at, ctx)
    if loader is None or _const(_kw(loader, "batch_size"), None):
        return None
    dataset = _dataset_class(_arg(loader, 0, "dataset"), loader_chain, loader.lineno, ctx)
    collate = _kw(loader, "collate_fn")
    if collate is None:
        index = key  # the default collate keeps a dict's keys, each stacked
    else:
        fn = ctx.bindings.module_function(collate.id) if isinstance(collate, ast.Name) else None
        index = _collated_key(fn, key, ctx) if fn is not None else None
    if index is None or dataset is None:
        return None
    getitem = next((m for m in dataset.body if isinstance(m, ast.FunctionDef) and m.name == "__getitem__"), None)
    if getitem is None:
        return None
    values = _returned_field(getitem, index)
    if not values:
        return None
    return [Source("sample", v, (getitem, ctx.bindings.tree), at + 1, dataset) for v, at in values]


def _loop_over(base, chain, line, ctx):
    """(the iterable, its scopes, its line) of the loop whose element ``base`` is, through moves
    (``batch = batch.to(device)``); None otherwise."""
    for _ in range(4):
        if not isinstance(base, ast.Name):
            return None
        binding, where = ctx.bindings.lookup(base.id, chain, line)
        if binding is None:
            return None
        if binding.how == "assign":
            value = binding.value
            if not (_method(value, *_MOVES) and isinstance(value.func.value, ast.Name)):
                return None
            base, chain, line = value.func.value, where, binding.line
            continue
        if binding.how != "iter":
            return None
        found = loop_element(base.id, binding, where)
        if found is None or found[1] is not None:
            return None  # the whole element only (``for batch in loader``)
        iterable, _index, at = found
        return iterable, where, at
    return None


def _dataloader(iterable, chain, line, ctx):
    """(the DataLoader call, its scopes) a loop's iterable is: a name bound to one, or to the call of a
    function or lambda of the file that returns one (``loader = lambda idx, shuffle: DataLoader(...)``)."""
    b = ctx.bindings
    for _ in range(4):
        if isinstance(iterable, ast.Name):
            binding, where = b.lookup(iterable.id, chain, line)
            if binding is None or binding.how != "assign":
                return None, None
            iterable, chain, line = binding.value, where, binding.line
            continue
        if not isinstance(iterable, ast.Call):
            return None, None
        if ctx.qualified(iterable.func) in LOADERS:
            return iterable, chain
        maker = None
        if isinstance(iterable.func, ast.Name):
            binding, where = b.lookup(iterable.func.id, chain, line)
            if binding is not None and isinstance(binding.value, ast.Lambda):
                maker, chain = binding.value, (binding.value, *where)
            else:
                maker = b._local_function(iterable, chain, line)
                chain = (maker, b.tree) if maker is not None else chain
        if maker is None:
            return None, None
        returned = [maker.body] if isinstance(maker, ast.Lambda) else [v for v, _ in returned_values(maker) or ()]
        if len(returned) != 1:
            return None, None
        iterable, line = returned[0], returned[0].lineno
    return None, None


def _dataset_class(expr, chain, line, ctx):
    """The Dataset class of the file a loader's dataset is an instance of, through names, Subset and the
    parts of a random_split (``train_part, valid_part = random_split(full, [...])``)."""
    b = ctx.bindings
    for _ in range(6):
        if isinstance(expr, ast.Name):
            binding, where = b.lookup(expr.id, chain, line)
            split = binding is not None and binding.how == "item" and isinstance(binding.value, ast.Call)
            if split and ctx.qualified(binding.value.func) in _SPLITS and binding.value.args:
                expr, chain, line = binding.value.args[0], where, binding.line
                continue
            if binding is None or binding.how != "assign":
                return None
            expr, chain, line = binding.value, where, binding.line
            continue
        if not isinstance(expr, ast.Call):
            return None
        if ctx.qualified(expr.func) in _SUBSETS and expr.args:
            expr = expr.args[0]
            continue
        return b.classes().get(getattr(expr.func, "id", None) or "")
    return None


def _collated_key(fn, key: str, ctx):
    """The field of a sample that ``key`` of what collate function ``fn`` returns stacks: its position in
    the sample (an int) or its key (a str); None where the function does not show it."""
    returned = returned_values(fn) or []
    if len(returned) != 1:
        return None
    value = returned[0][0]
    field = None
    if isinstance(value, ast.Dict):
        field = next((v for k, v in zip(value.keys, value.values) if _const(k, key)), None)
    elif isinstance(value, ast.Call) and isinstance(value.func, ast.Name):
        field = next((k.value for k in value.keywords if k.arg == key), None)
        names = _field_names(ctx.bindings.classes().get(value.func.id))
        if field is None and names and key in names and names.index(key) < len(value.args):
            field = value.args[names.index(key)]
    if isinstance(field, ast.Call) and ctx.qualified(field.func) in _STACKS and len(field.args) == 1:
        field = field.args[0]
    if not isinstance(field, ast.Name):
        return None
    return _sample_position(fn, field.id)


def _field_names(klass) -> list[str] | None:
    """A dataclass's or NamedTuple's fields, in order (the annotated names of its body)."""
    if klass is None:
        return None
    return [s.target.id for s in klass.body if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)]


def _sample_position(fn, name: str):
    """Where the values appended to list ``name`` in collate ``fn`` come from in each sample: ``for g, (z, e, b, y)
    in enumerate(items)`` ... ``ys.append(y)`` over the function's first parameter -> 3."""
    items = fn.args.args[0].arg if fn.args.args else None
    appended = [
        n.args[0]
        for n in walk(fn)
        if _method(n, "append") and getattr(n.func.value, "id", None) == name and len(n.args) == 1
    ]
    if len(appended) != 1 or not isinstance(appended[0], ast.Name):
        return None
    value = appended[0].id
    for loop in walk(fn):
        if not isinstance(loop, ast.For):
            continue
        target, iterable = _without_enumerate(loop)
        if not (isinstance(iterable, ast.Name) and iterable.id == items and isinstance(target, ast.Tuple)):
            continue
        names = [getattr(e, "id", None) for e in target.elts]
        if value in names:
            return names.index(value)
    return None


def _returned_field(getitem, index):
    """(expression, line) of field ``index`` (a position, or a dict's key) of every sample __getitem__ returns."""
    if isinstance(index, int):
        return returned_values(getitem, index)
    out = []
    for value, at in returned_values(getitem) or ():
        if not isinstance(value, ast.Dict):
            return None
        found = next((v for k, v in zip(value.keys, value.values) if _const(k, index)), None)
        if found is None:
            return None
        out.append((found, at))
    return out


def collated_element(name: str, chain, line, ctx):
    """What the collate function returns for the element, where ``name`` is bound by a loop over a loader
    of the file with a collate function of the module (``for x, lengths, y in loader``, ``collate_fn=pad_collate``
    returning ``pad_sequence(signals, batch_first=True), lengths, torch.tensor(labels)``); None otherwise."""
    found = collated_return(name, chain, line, ctx)
    return found[0] if found is not None else None


def collated_return(name: str, chain, line, ctx):
    """As collated_element, with where to read it: (the returned expression, the collate function, the line
    of its return)."""
    binding, where = ctx.bindings.lookup(name, chain, line)
    found = loop_element(name, binding, where) if binding is not None and binding.how == "iter" else None
    if found is None or found[1] is None:
        return None
    iterable, index, at = found
    loader = _loader_through_parameters(iterable, where, at, ctx, 0)
    collate = _kw(loader, "collate_fn") if loader is not None else None
    fn = ctx.bindings.module_function(collate.id) if isinstance(collate, ast.Name) else None
    returned = returned_values(fn, index) if fn is not None else None
    return (returned[0][0], fn, returned[0][1]) if returned and len(returned) == 1 else None


def _loader_through_parameters(iterable, chain, line, ctx, depth):
    """The DataLoader call a loop's iterable is: through names, a function or lambda of the file that returns
    it (``make_loader(...)``), and a parameter: the one loader the module's calls that show one pass."""
    if isinstance(iterable, ast.Name) and depth < 3:
        binding, owner = ctx.bindings.lookup(iterable.id, chain, line)
        if binding is not None and binding.how == "param":
            sites = ctx.bindings.passed(owner[0], iterable.id) or []
            found = {
                id(c): c
                for value, caller, at, _k in sites
                if (c := _loader_through_parameters(value, caller, at, ctx, depth + 1)) is not None
            }
            return next(iter(found.values())) if len(found) == 1 else None
    loader, _chain = _dataloader(iterable, chain, line, ctx)
    return loader
