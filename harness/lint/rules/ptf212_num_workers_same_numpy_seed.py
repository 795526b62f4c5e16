"""What: a Dataset makes its own random generator in __init__ (np.random.default_rng, RandomState, random.Random).
Why: Each DataLoader worker gets a copy in the same state and draws the same numbers; torch reseeds
only its own, Python's and NumPy's global generators per worker.
Fix: a worker_init_fn that reseeds the copy from get_worker_info().seed.
"""

from __future__ import annotations

import ast

from torch_pitfalls.lint.bindings import LOADERS
from torch_pitfalls.lint.rules.base import UNSURE, Rule, _const, _kw
from torch_pitfalls.lint.rules.shared.flow import _scopes_of, _values
from torch_pitfalls.lint.walking import walk

GENERATORS = (
    "numpy.random.default_rng",
    "numpy.random.RandomState",
    "numpy.random.Generator",
    "random.Random",
    "torch.Generator",
)
DATASETS = ("torch.utils.data.Dataset", "torch.utils.data.IterableDataset", "torch.utils.data.dataset.Dataset")


def _generator_made(value, ctx) -> bool:
    """``np.random.default_rng(seed)``, or a method chained on a generator (``torch.Generator().manual_seed(0)``)."""
    while isinstance(value, ast.Call):
        if ctx.qualified(value.func) in GENERATORS:
            return True
        if not isinstance(value.func, ast.Attribute):
            return False
        value = value.func.value
    return False


def _dataset_class(klass, ctx, depth: int = 0) -> bool:
    """A class deriving torch's Dataset or IterableDataset, directly or through classes of this file."""
    for base in klass.bases:
        if ctx.qualified(base) in DATASETS:
            return True
        own = ctx.bindings.classes().get(getattr(base, "id", None))
        if own is not None and depth < 8 and _dataset_class(own, ctx, depth + 1):
            return True
    return False


def _given(value, call, ctx) -> bool:
    """``worker_init_fn=`` given a function: not None, and for a parameter not None at every call site."""
    if value is None or _const(value, None):
        return False
    if isinstance(value, ast.Name):
        held = _values(value.id, _scopes_of(call, ctx), call.lineno, ctx.bindings)
        if held is not None:
            return any(not _const(v, None) for v in held)
    return True


def _loaders_with_workers(ctx) -> list | None:
    """The file's DataLoaders that start worker processes (num_workers given and not 0) with no
    worker_init_fn: a list; None where the file builds no DataLoader at all."""
    loaders = [n for n in walk(ctx.module) if isinstance(n, ast.Call) and ctx.qualified(n.func) in LOADERS]
    if not loaders:
        return None
    return [
        c
        for c in loaders
        if (workers := _kw(c, "num_workers")) is not None
        and not _const(workers, 0)
        and not _given(_kw(c, "worker_init_fn"), c, ctx)
        and not any(k.arg is None for k in c.keywords)  # **kwargs: it may hold a worker_init_fn
    ]


def _reseeded(attr: str, init, ctx) -> bool:
    """The generator is set again somewhere outside ``__init__``: per sample (``self.rng =
    np.random.default_rng(index)`` in ``__getitem__``) or per worker (``info.dataset.rng = ...`` in a
    worker_init_fn)."""
    return any(
        isinstance(n, ast.Assign)
        and any(isinstance(t, ast.Attribute) and t.attr == attr for t in n.targets)
        and not (init.lineno <= n.lineno <= (init.end_lineno or init.lineno))
        for n in walk(ctx.module)
    )


def _shared_generator(node, ctx):
    """``self.rng = np.random.default_rng(seed)`` in a Dataset's ``__init__``: reported where the file
    loads with workers and no worker_init_fn; UNSURE where it builds no DataLoader (how the dataset is
    loaded is not in the file)."""
    if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Attribute)):
        return False
    target, fn = node.targets[0], ctx.function
    if not (
        getattr(target.value, "id", None) == "self"
        and getattr(fn, "name", None) == "__init__"
        and ctx.klass is not None
        and _generator_made(node.value, ctx)
        and _dataset_class(ctx.klass, ctx)
        and not _reseeded(target.attr, fn, ctx)
    ):
        return False
    loaders = _loaders_with_workers(ctx)
    if loaders is None:
        return UNSURE
    return bool(loaders)


RULE = Rule(
    "PTF212",
    ("num-workers-same-numpy-seed",),
    "this Dataset makes its own random generator in __init__, and the DataLoader's worker processes each "
    "get a copy in the same state: every worker draws the same random numbers; reseed it per worker "
    "(worker_init_fn setting get_worker_info().dataset.<rng> from get_worker_info().seed)",
    _shared_generator,
    nodes=ast.Assign,
)
