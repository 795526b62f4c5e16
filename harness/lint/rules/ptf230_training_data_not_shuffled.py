"""What: a DataLoader whose batches train a model (its loop calls backward() or an optimizer's step) built
without shuffle=True and without a sampler.
Why: DataLoader defaults to shuffle=False: every epoch sees the data in its stored order (often by class or by
time), so batches are not a sample of the whole set, and training drifts toward what came last or fails.
Fix: DataLoader(train_set, ..., shuffle=True) (or a DistributedSampler / RandomSampler); keep shuffle=False for
evaluation.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADERS, arguments, parameter_defaults, returned_values
from torch_pitfalls.lint.rules.base import CALL, UNSURE, Rule, _arg, _const, _has_kw, _kw, _method, last_names
from torch_pitfalls.lint.rules.shared.flow import _dead, _scopes_of, _values
from torch_pitfalls.lint.rules.shared.options import default_truth, option_default
from torch_pitfalls.lint.rules.shared.training_loop import _optimizer_step
from torch_pitfalls.lint.walking import walk

_ITERABLE_BASES = (
    "torch.utils.data.IterableDataset",
    "torch.utils.data.dataset.IterableDataset",
    "torch.utils.data.IterDataPipe",
    "torch.utils.data.datapipes.datapipe.IterDataPipe",
)
_MAP_BASES = ("torch.utils.data.Dataset", "torch.utils.data.dataset.Dataset")
# map-style datasets of torch and torchvision: indexed, in their stored order
_MAP_DATASETS = (
    "torch.utils.data.TensorDataset",
    "torch.utils.data.Subset",
    "torch.utils.data.ConcatDataset",
    "torch.utils.data.dataset.TensorDataset",
)
_RANDOM = (
    "random",
    "numpy.random",
    "np.random",
    "torch.randint",
    "torch.randperm",
    "torch.rand",
    "torch.randn",
    "torch.multinomial",
    "torch.normal",
)
_WRAPPERS = ("enumerate", "tqdm", "iter", "zip", "islice")


def _off(value, ctx, line) -> bool:
    """``shuffle`` is provably off: absent, False or None, or a name every value of which (its assignment,
    what each call of the module passes for a parameter) is False or None."""
    if value is None:
        return True
    if isinstance(value, ast.Constant):
        return value.value is False or value.value is None
    if isinstance(value, ast.Name):
        values = _values(value.id, _scopes_of(value, ctx), line, ctx.bindings)
        return bool(values) and all(isinstance(v, ast.Constant) and v.value in (False, None) for v in values)
    default = option_default(value, ctx, line=line)  # shuffle=args.shuffle, a flag off unless given
    return isinstance(default, ast.Constant) and default.value in (False, None)


# --- the dataset --------------------------------------------------------------------------------------
def _dataset_kind(expr, ctx, line, depth=0):
    """ "map" (an indexed dataset in stored order), "own-order" (iterable, or one that draws its own
    random items: shuffle does not apply), or None (not known here)."""
    if expr is None or depth > 6:
        return None
    if isinstance(expr, ast.Name):
        chain = _scopes_of(expr, ctx)
        values = _values(expr.id, chain, line, ctx.bindings)
        if not values:
            return _unpacked_kind(expr.id, chain, line, ctx, depth)
        kinds = {_dataset_kind(v, ctx, line, depth + 1) for v in values if v is not expr}
        return kinds.pop() if len(kinds) == 1 else None
    if not isinstance(expr, ast.Call):
        return None
    if (maker := ctx.bindings._local_function(expr, _scopes_of(expr, ctx), line)) is not None:
        return _returned_kind(maker, None, ctx, depth)
    q = ctx.qualified(expr.func) or ""
    if q.rsplit(".", 1)[-1] == "TensorDataset" and expr.args:
        if all(_random_draw(a, ctx, line) or _split_at_random(a, ctx, line) for a in expr.args):
            return "own-order"  # tensors drawn at random, or rows train_test_split shuffled: already in random order
    if q in _MAP_DATASETS or (q.startswith("torchvision.datasets.") and q.rsplit(".", 1)[-1][:1].isupper()):
        return "map"
    if isinstance(expr.func, ast.Name):
        klass = ctx.bindings.classes().get(expr.func.id)
        if klass is not None:
            return _class_kind(klass, ctx)
    return None


def _unpacked_kind(name, chain, line, ctx, depth):
    """``train_set, classes = class_folder_dataset(root)``: the element the module's function returns there."""
    binding, where = ctx.bindings.lookup(name, chain, line)
    if binding is None or binding.how != "item" or binding.index is None:
        return None
    maker = ctx.bindings._local_function(binding.value, where, binding.line)
    return _returned_kind(maker, binding.index, ctx, depth) if maker is not None else None


def _returned_kind(maker, index, ctx, depth):
    """The kind of dataset every return of a module function gives (element ``index`` of a returned tuple)."""
    returned = returned_values(maker, index)
    if not returned:
        return None
    kinds = {_dataset_kind(value, ctx, at, depth + 1) for value, at in returned}
    return kinds.pop() if len(kinds) == 1 else None


_RANDOM_TENSORS = ("rand", "randn", "randint", "randperm", "normal", "rand_like", "randn_like", "randint_like")


def _random_draw(expr, ctx, line, depth: int = 0) -> bool:
    """A tensor drawn at random (``torch.randn(n, 4)``, through names and ``.to(device)``); a few steps back at
    most (``x, y = torch.load(...)`` then ``for x, y in loader`` names ``x`` through itself)."""
    if isinstance(expr, ast.Name):
        if depth > 4:
            return False
        values = _values(expr.id, _scopes_of(expr, ctx), line, ctx.bindings)
        return bool(values) and all(v is not expr and _random_draw(v, ctx, line, depth + 1) for v in values)
    while _method(expr, "to", "float", "long", "cuda", "double"):
        expr = expr.func.value
    q = ctx.qualified(expr.func) if isinstance(expr, ast.Call) else None
    return q is not None and q.startswith("torch.") and q.rsplit(".", 1)[-1] in _RANDOM_TENSORS


_CONVERTS = ("tensor", "as_tensor", "from_numpy", "asarray", "array", "Tensor", "FloatTensor", "LongTensor")


def _split_at_random(expr, ctx, line, depth: int = 0) -> bool:
    """Rows of a ``train_test_split`` (scikit-learn's shuffles them unless told ``shuffle=False``), through
    tuple unpacking, names, conversions to a tensor and ``.float()``/``.to(device)``/``.values``."""
    if depth > 6:
        return False
    while _method(expr, "to", "float", "long", "cuda", "double", "to_numpy", "astype"):
        expr = expr.func.value
    if isinstance(expr, ast.Attribute) and expr.attr == "values":
        expr = expr.value
    if isinstance(expr, ast.Call) and (ctx.qualified(expr.func) or "").rsplit(".", 1)[-1] in _CONVERTS and expr.args:
        return _split_at_random(expr.args[0], ctx, line, depth + 1)
    if not isinstance(expr, ast.Name):
        return False
    binding, where = ctx.bindings.lookup(expr.id, _scopes_of(expr, ctx), line)
    if binding is None or binding.value is None:
        return False
    if binding.how == "assign":
        return _split_at_random(binding.value, ctx, binding.line, depth + 1)
    value = binding.value
    return (
        binding.how == "item"
        and isinstance(value, ast.Call)
        and (ctx.qualified(value.func) or "").endswith("train_test_split")
        and not _const(_kw(value, "shuffle"), False)
        and not any(k.arg is None for k in value.keywords)
    )


def _class_kind(klass, ctx, depth=0):
    if depth > 6:
        return None
    methods = {m.name: m for m in klass.body if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if "__iter__" in methods:
        return "own-order"
    getitem = methods.get("__getitem__")
    built_random = any(_draws_at_random(m, ctx) for name, m in methods.items() if name != "__getitem__")
    if built_random or (getitem is not None and (not _reads_index(getitem) or _picks_at_random(getitem, ctx))):
        return "own-order"
    for base in klass.bases:
        q = ctx.qualified(base)
        if q in _ITERABLE_BASES:
            return "own-order"
        if isinstance(base, ast.Name) and base.id in ctx.bindings.classes():
            inner = _class_kind(ctx.bindings.classes()[base.id], ctx, depth + 1)
            if inner is not None:
                return inner
    if getitem is not None and any(ctx.qualified(b) in _MAP_BASES for b in klass.bases):
        return "map"
    return None


def _reads_index(getitem) -> bool:
    """``__getitem__`` reads the index it is given (not ``def __getitem__(self, *args): return torch.ones(2)``,
    where every item is the same and the order nothing)."""
    a = getitem.args
    params = [x.arg for x in (*a.posonlyargs, *a.args)][1:2]
    if not params:
        return False
    return any(isinstance(n, ast.Name) and n.id == params[0] for n in ast.walk(getitem))


def _picks_at_random(getitem, ctx) -> bool:
    """``__getitem__`` picks its own item with a random draw (``self.items[random.randrange(n)]``, an index
    drawn into a name first): a draw that only augments the item it was asked for (a gain, a shift) does
    not change which item comes."""
    drawn = {
        t.id
        for n in walk(getitem)
        if isinstance(n, ast.Assign) and _draws_at_random(n.value, ctx)
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    return any(
        isinstance(n, ast.Subscript)
        and (_draws_at_random(n.slice, ctx) or any(isinstance(x, ast.Name) and x.id in drawn for x in walk(n.slice)))
        for n in walk(getitem)
    )


def _draws_at_random(fn, ctx) -> bool:
    """A method of the dataset draws at random: ``__getitem__`` picks its own item (``random.randint``,
    ``np.random.choice``), or the data is random or shuffled when built (``torch.randn`` in ``__init__``):
    no stored order that batches would follow."""
    for n in ast.walk(fn):
        if isinstance(n, ast.Call):
            q = ctx.qualified(n.func) or ""
            if any(q == r or q.startswith(r + ".") for r in _RANDOM):
                return True
    return False


# --- where the loader's batches go --------------------------------------------------------------------
def _trains(body, ctx, klass, depth=0, flags=frozenset()) -> bool:
    """The statements call backward() or an optimizer's step, or a function of this module (a method of
    the class) that does. In a function the loader is handed to, not a step behind a test of one of its
    parameters (``if mode == "train": loss.backward()``): the same loop also evaluates."""
    for n in (x for s in body for x in ast.walk(s)):
        if not isinstance(n, ast.Call):
            continue
        if (_method(n, "backward", "manual_backward") or _optimizer_step(n, ctx)) and not _behind(n, flags, ctx):
            return True
        if depth < 2:
            callee = _callee(n, ctx, klass)
            if callee is not None and _trains(callee.body, ctx, klass, depth + 1):
                return True
    return False


def _behind(node, flags, ctx) -> bool:
    """``node`` sits in an ``if`` (or ``a if t else b``) whose test reads one of ``flags``."""
    up = ctx.parent(node)
    while flags and up is not None and not isinstance(up, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Module)):
        if isinstance(up, (ast.If, ast.IfExp, ast.While)) and any(
            isinstance(n, ast.Name) and n.id in flags for n in ast.walk(up.test)
        ):
            return True
        up = ctx.parent(up)
    return False


def _params(fn) -> frozenset:
    """The function's parameters, and the names it sets from them (``training = optimizer is not None``):
    a step behind a test of one of them runs for some callers only."""
    a = fn.args
    params = {x.arg for x in (*a.posonlyargs, *a.args, *a.kwonlyargs)}
    derived = {
        t.id
        for n in walk(fn)
        if isinstance(n, ast.Assign) and any(isinstance(x, ast.Name) and x.id in params for x in walk(n.value))
        for t in n.targets
        if isinstance(t, ast.Name)
    }
    return frozenset(params | derived)


def _callee(call, ctx, klass):
    """The module-level function, or the method of ``klass`` through ``self.``, that a call calls."""
    if isinstance(call.func, ast.Name):
        return ctx.bindings.module_function(call.func.id)
    if isinstance(call.func, ast.Attribute) and getattr(call.func.value, "id", None) == "self" and klass is not None:
        return next(
            (
                m
                for m in klass.body
                if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef)) and m.name == call.func.attr
            ),
            None,
        )
    return None


def _refers(expr, ref) -> bool:
    """``expr`` is the loader: the name (``loader``) or ``self.`` attribute, bare or wrapped
    (``enumerate(loader)``, ``tqdm(loader)``, ``iter(loader)``)."""
    while isinstance(expr, ast.Call) and getattr(expr.func, "id", getattr(expr.func, "attr", None)) in _WRAPPERS:
        if not expr.args:
            return False
        if any(_refers(a, ref) for a in expr.args[1:]):
            return True
        expr = expr.args[0]
    return ast.dump(expr) == ast.dump(ref)


def _carries_state(loop, fn) -> bool:
    """The loop hands a state from one batch to the next (``out, hidden = model(x, hidden)`` with ``hidden``
    made before the loop): a stateful sequence model that needs the batches in order."""
    bound_before = {
        t.id
        for s in ast.walk(fn)
        if isinstance(s, ast.Assign) and s.lineno < loop.lineno
        for t in ast.walk(s)
        if isinstance(t, ast.Name) and isinstance(t.ctx, ast.Store)
    }
    for s in ast.walk(loop):
        if not (isinstance(s, ast.Assign) and isinstance(s.value, ast.Call)):
            continue
        targets = {t.id for t in ast.walk(s.targets[0]) if isinstance(t, ast.Name)}
        passed = {a.id for a in ast.walk(s.value) if isinstance(a, ast.Name)}
        if targets & passed & bound_before:
            return True
    return False


def _same_loader(ref, at, ctx, built) -> bool:
    """At line ``at`` the name still holds the loader built here, not one made from it since
    (``model, opt, loader = privacy_engine.make_private(data_loader=loader, ...)``, Poisson sampling)."""
    if built is None or not isinstance(ref, ast.Name):
        return True
    binding, _ = ctx.bindings.lookup(ref.id, ctx.chain(), at)
    return binding is not None and binding.value is built


def _used_to_train(fn, ref, ctx, klass, depth=0, built=None) -> bool:
    """In ``fn``, a loop over the loader trains (and carries no state across batches), or the loader is
    handed to a function of this module (a method of the class) that trains on it."""
    for n in ast.walk(fn):
        if getattr(n, "lineno", None) is not None and not _same_loader(ref, n.lineno, ctx, built):
            continue
        if isinstance(n, (ast.For, ast.AsyncFor)) and _refers(n.iter, ref):
            flags = _params(fn) if depth else frozenset()
            if _trains(n.body, ctx, klass, flags=flags) and not _carries_state(n, fn):
                return True
        elif isinstance(n, ast.Call) and depth < 2 and not _refers(n, ref):
            callee = _callee(n, ctx, klass)
            if callee is None or callee is fn:
                continue
            for param, value in arguments(n, callee).items():
                if _refers(value, ref) and _used_to_train(
                    callee, ast.Name(id=param, ctx=ast.Load()), ctx, klass, depth + 1
                ):
                    return True
    return False


def _trained_on(node, ctx, sites=None) -> bool:
    """The loader built here feeds a training loop: bound to a name or a ``self.`` attribute that a
    training loop iterates, iterated directly, or returned from Lightning's ``train_dataloader``. With
    ``sites``, only a loader returned to one of those calls counts."""
    parent = ctx.parent(node)
    if sites is not None:
        return isinstance(parent, ast.Return) and _returned_to_train(node, ctx, sites)
    fn = ctx.function
    klass = ctx.klass
    if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is node:
        return _trains(parent.body, ctx, klass) and not _carries_state(parent, fn)
    if isinstance(parent, (ast.Return, ast.Tuple)):
        if getattr(fn, "name", None) == "train_dataloader" and klass is not None:
            return True
        return _returned_to_train(node, ctx)
    if not (isinstance(parent, ast.Assign) and len(parent.targets) == 1):
        return False
    target = parent.targets[0]
    if isinstance(target, ast.Name):
        ref = ast.Name(id=target.id, ctx=ast.Load())
        return _used_to_train(fn, ref, ctx, klass, built=node) or _returned_to_train(node, ctx)
    if isinstance(target, ast.Attribute) and getattr(target.value, "id", None) == "self" and klass is not None:
        ref = ast.Attribute(value=ast.Name(id="self", ctx=ast.Load()), attr=target.attr, ctx=ast.Load())
        return any(
            _used_to_train(m, ref, ctx, klass)
            for m in klass.body
            if isinstance(m, (ast.FunctionDef, ast.AsyncFunctionDef))
        )
    return False


def _returned_to_train(node, ctx, sites=None) -> bool:
    """The loader is what a function of the module returns (``return train_loader, val_loader``, the
    call itself, or a name bound to it), and a caller trains on the name it unpacks or binds it to."""
    fn = ctx.function
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)) or ctx.bindings.module_function(fn.name) is not fn:
        return False
    names = {node}
    parent = ctx.parent(node)
    if isinstance(parent, ast.Assign) and len(parent.targets) == 1 and isinstance(parent.targets[0], ast.Name):
        names = {parent.targets[0].id}
    for ret in walk(fn):
        if not isinstance(ret, ast.Return) or ret.value is None:
            continue
        values = ret.value.elts if isinstance(ret.value, ast.Tuple) else [ret.value]
        for index, value in enumerate(values):
            if value in names or (
                isinstance(value, ast.Name) and value.id in names and _same_loader(value, ret.lineno, ctx, node)
            ):
                requires = _branch_requirements(ret, fn, ctx)
                return _caller_trains(fn, index if isinstance(ret.value, ast.Tuple) else None, ctx, sites, requires)
    return False


def _branch_requirements(ret, fn, ctx) -> dict:
    """The truth each parameter of ``fn`` must have for ``ret`` to run, where the function branches on a bare
    parameter: inside ``if train:`` (True) or its ``else`` (False), or after an ``if train:`` whose body returns
    (False): ``make_loader(ds, cfg, train)`` returns its evaluation loader only when ``train`` is false."""
    params = {a.arg for a in fn.args.args + fn.args.kwonlyargs}
    out = {}

    def tested(test):
        negated = isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not)
        test = test.operand if negated else test
        return (test.id, not negated) if isinstance(test, ast.Name) and test.id in params else (None, None)

    node, up = ret, ctx.parent(ret)
    while up is not None and up is not fn:
        if isinstance(up, ast.If):
            name, truth = tested(up.test)
            if name is not None:
                out.setdefault(name, truth if node in up.body else not truth)
        node, up = up, ctx.parent(up)
    for stmt in fn.body:  # an earlier ``if train: ... return`` leaves the rest to the other truth
        if stmt.lineno >= ret.lineno:
            break
        if isinstance(stmt, ast.If) and not stmt.orelse and stmt.body and isinstance(stmt.body[-1], ast.Return):
            name, truth = tested(stmt.test)
            if name is not None:
                out.setdefault(name, not truth)
    return out


def _contradicts(call, fn, requires) -> bool:
    """The call passes a literal for one of those parameters that selects the other branch."""
    given = arguments(call, fn)
    return any(
        isinstance(given.get(name), ast.Constant) and bool(given[name].value) != truth
        for name, truth in requires.items()
    )


def _caller_trains(fn, index, ctx, sites=None, requires=None) -> bool:
    """A call of ``fn`` (one of ``sites``, where given; not one whose literal arguments select another branch than
    the loader's) binds its result (element ``index`` of it) to a name a loop of the caller trains on."""
    for call, chain, klass in ctx.bindings.call_sites(fn.name):
        if sites is not None and call not in sites:
            continue
        if requires and _contradicts(call, fn, requires):
            continue
        statement = ctx.parent(call)
        if not (isinstance(statement, ast.Assign) and statement.value is call and len(statement.targets) == 1):
            continue
        target = statement.targets[0]
        if index is not None:
            if not (isinstance(target, ast.Tuple) and len(target.elts) > index):
                continue
            target = target.elts[index]
        if isinstance(target, ast.Name) and _used_to_train(
            chain[0], ast.Name(id=target.id, ctx=ast.Load()), ctx, klass
        ):
            return True
    return False


def _not_shuffled(node, ctx):
    if ctx.qualified(node.func) not in LOADERS or ctx.function is None or _dead(node, ctx):
        return False
    keywords = _spread(node, ctx)
    if keywords is None or any(isinstance(a, ast.Starred) for a in node.args):
        return False  # **kwargs / *args: what they pass is not known
    call = ast.Call(func=node.func, args=node.args, keywords=keywords)  # the arguments, ``**common`` read out
    if _has_kw(call, "batch_sampler") or len(node.args) > 3:
        return False
    sites = None
    if _has_kw(call, "sampler"):
        sites = _sampler_left_out(_kw(call, "sampler"), ctx)
        if not sites:
            return False
    if not _off(_arg(call, 2, "shuffle"), ctx, node.lineno):
        return False
    kind = _dataset_kind(_arg(call, 0, "dataset"), ctx, node.lineno)
    if kind == "own-order" or not _trained_on(node, ctx, sites):
        return False
    return True if kind == "map" else UNSURE


def _spread(call, ctx) -> list[ast.keyword] | None:
    """The call's keywords, each ``**name`` replaced by the keys of the dict the function binds ``name`` to
    (``common = dict(batch_size=64, num_workers=4)``, ``{"batch_size": 64}``) and changes nowhere; None where a
    ``**`` passes what the code does not show."""
    out = []
    for k in call.keywords:
        if k.arg is not None:
            out.append(k)
            continue
        value = ctx.value_of(k.value, call.lineno) if isinstance(k.value, ast.Name) else None
        if isinstance(value, ast.Call) and getattr(value.func, "id", None) == "dict" and not value.args:
            pairs = [(kw.arg, kw.value) for kw in value.keywords]
        elif isinstance(value, ast.Dict):
            pairs = [
                (key.value if isinstance(key, ast.Constant) else None, v) for key, v in zip(value.keys, value.values)
            ]
        else:
            return None
        if any(not isinstance(key, str) for key, _ in pairs) or _changed(k.value.id, ctx.function):
            return None
        out += [ast.keyword(arg=key, value=v) for key, v in pairs]
    return out


def _changed(name: str, fn) -> bool:
    """The dict bound to ``name`` gets keys after it is built (``d["shuffle"] = True``, ``d.update(...)``)."""
    return any(
        (isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store) and getattr(n.value, "id", None) == name)
        or (_method(n, "update", "setdefault", "__setitem__") and getattr(n.func.value, "id", None) == name)
        for n in walk(fn)
    )


def _sampler_left_out(value, ctx):
    """``sampler=sampler``, a parameter of a loader-building function: the calls of it that pass no sampler
    when the script runs with its defaults (``None``, left to its default None, or a name set to
    ``make_sampler(ds) if args.balanced else None`` with ``--balanced`` off); None where that cannot be told."""
    fn = ctx.function
    if not (isinstance(value, ast.Name) and isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))):
        return None
    binding, where = ctx.bindings.lookup(value.id, ctx.chain(), value.lineno)
    if binding is None or binding.how != "param" or where[0] is not fn:
        return None
    default = parameter_defaults(fn).get(value.id)
    out = []
    for call, chain, _klass in ctx.bindings.call_sites(fn.name):
        passed = arguments(call, fn).get(value.id, default)
        if _none_at_defaults(passed, chain, call.lineno, ctx):
            out.append(call)
    return out


def _none_at_defaults(expr, chain, line, ctx, depth=0) -> bool:
    if depth > 4 or expr is None:
        return False
    if isinstance(expr, ast.Constant):
        return expr.value is None
    if isinstance(expr, ast.IfExp):
        taken = default_truth(expr.test, ctx, chain, line)
        return taken is not None and _none_at_defaults(expr.body if taken else expr.orelse, chain, line, ctx, depth + 1)
    if isinstance(expr, ast.Name):
        binding, where = ctx.bindings.lookup(expr.id, chain, line)
        if binding is not None and binding.how == "assign":
            return _none_at_defaults(binding.value, where, binding.line, ctx, depth + 1)
    return False


RULE = Rule(
    "PTF230",
    ("training-data-not-shuffled",),
    "this DataLoader feeds a training loop but does not shuffle (shuffle defaults to False): every epoch sees "
    "the data in stored order (often by class or time), so batches are not a sample of the whole set and "
    "training drifts or fails; pass shuffle=True (or a DistributedSampler / RandomSampler); keep "
    "shuffle=False for evaluation",
    _not_shuffled,
    nodes=CALL,
    needs=("DataLoader",),
    calls=last_names(*LOADERS),
)
