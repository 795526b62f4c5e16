"""Process-wide state a case could leave changed, as a table of named probes.

The runner snapshots every probe before a variant and compares after it; a difference is a
leak, reported by name, and the snapshot is restored so later cases are not poisoned.
RNG states count too: a case seeds locally (``torch_pitfalls.seeded``) or uses its own generator.
"""

from __future__ import annotations

import os
import random
import sys
import warnings
from dataclasses import dataclass
from typing import Any, Callable

import torch

try:
    import numpy
except ImportError:  # numpy is optional for torch; then there is no numpy state to guard
    numpy = None

# Environment variables a torch module sets when it is first imported: torch._dynamo (imported by the
# first optimizer step or profiler run) points inductor's cache at its default folder. Added by that
# first import during a variant, the variable is an import side effect, not the variant's leak (as
# for warning filters below). Importing torch._dynamo up front instead cost every process that
# imports the harness almost a second.
SET_ON_IMPORT = {"TORCHINDUCTOR_CACHE_DIR": "torch._dynamo"}

# sys.path entries a module appends when it is first imported, each found from the module:
# torch.distributed.nn.jit.instantiator puts its folder of generated templates there, and setuptools
# (>= 70) its _vendor folder; torch._dynamo's first import can bring both in (the first zero_grad()
# on 2.2-2.9 does: observed, a case run alone reported "leaked global state: sys.path" there).
PATH_ON_IMPORT: dict[str, Callable[[Any], Any]] = {
    "torch.distributed.nn.jit.instantiator": lambda m: getattr(m, "INSTANTIATED_TEMPLATE_DIR_PATH", None),
    "setuptools": lambda m: os.path.join(os.path.dirname(m.__file__ or ""), "_vendor"),
}

# Warning filters a torch module adds when it is first imported, whose category is a builtin one (a
# filter for a library's own category is told by that category's module, below): torch._dynamo's
# first import on 2.1-2.2 silences torch.distributed's UserWarnings (observed as "leaked global
# state: warning filters" when the first zero_grad() of a process ran inside a variant).
FILTERS_ON_IMPORT = {("ignore", "UserWarning", "torch.distributed"): "torch._dynamo"}


@dataclass(frozen=True)
class Probe:
    name: str
    get: Callable[[], Any]
    set: Callable[[Any], None]
    same: Callable[[Any, Any], bool] = lambda a, b: a == b


PRINT_OPTION_NAMES = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")


def _print_options() -> dict:
    # getattr, not vars(): before 2.x the defaults are class attributes, and the first
    # set_printoptions() call copies them into the instance without changing any value.
    return {k: getattr(torch._tensor_str.PRINT_OPTS, k) for k in PRINT_OPTION_NAMES}


def _set_print_options(opts: dict) -> None:
    for key, value in opts.items():
        setattr(torch._tensor_str.PRINT_OPTS, key, value)


def _set_anomaly(state: tuple[bool, bool]) -> None:
    torch.set_anomaly_enabled(state[0], state[1])


def _set_deterministic(state: tuple[bool, bool]) -> None:
    torch.use_deterministic_algorithms(state[0], warn_only=state[1])


def _with_modules(get):
    """``get`` paired with the modules imported so far: what a module's first import during the
    variant changed (an import side effect) is then told apart from what the variant did."""
    return lambda: (get(), frozenset(sys.modules))


def _imported(before, after) -> frozenset[str]:
    """The modules first imported between two ``_with_modules`` snapshots."""
    return after[1] - before[1]


def _same_warning_filters(before, after) -> bool:
    """Equal, except for filters that a library installs when a variant first imports it
    (sympy adds one for its own deprecation warning): those are import side effects, not leaks."""
    old, new, imported = before[0], after[0], _imported(before, after)
    added = [
        f
        for f in new
        if f not in old
        and (getattr(f[2], "__module__", "") in imported or FILTERS_ON_IMPORT.get(_filter_key(f)) in imported)
    ]
    return [f for f in new if f not in added] == old


def _filter_key(f) -> tuple:
    """(action, category name, module pattern) of a warnings filter entry."""
    action, _message, category, module, _line = f
    return action, getattr(category, "__name__", None), getattr(module, "pattern", module)


def _set_warning_filters(saved) -> None:
    warnings.filters[:] = saved[0]
    warnings._filters_mutated()


def _same_environ(before, after) -> bool:
    old, new, imported = before[0], after[0], _imported(before, after)
    by_import = {k for k, module in SET_ON_IMPORT.items() if k in new and k not in old and module in imported}
    return {k: v for k, v in new.items() if k not in by_import} == old


def _set_environ(saved) -> None:
    os.environ.clear()
    os.environ.update(saved[0])


def _same_sys_path(before, after) -> bool:
    old, new, imported = before[0], after[0], _imported(before, after)
    by_import = {entry(sys.modules[m]) for m, entry in PATH_ON_IMPORT.items() if m in imported}
    return [p for p in new if not (p in by_import and p not in old)] == old


def _set_sys_path(saved) -> None:
    sys.path[:] = saved[0]


def _same_numpy_state(a, b) -> bool:
    return a[0] == b[0] and numpy.array_equal(a[1], b[1]) and a[2:] == b[2:]


def _cuda_rng_get():
    # Reading CUDA RNG state would initialise CUDA; only guard it once a case has done so.
    if not torch.cuda.is_initialized():
        return None
    try:
        return torch.cuda.get_rng_state_all()
    except RuntimeError:  # a device-side assert left the context unusable (an isolated case's
        return None  # symptom, seen on 2.11.0+cu130): nothing to read, nothing to restore


def _cuda_rng_set(states) -> None:
    if states is not None:
        torch.cuda.set_rng_state_all(states)


def _same_tensor_lists(a, b) -> bool:
    if a is None:  # CUDA was first initialised inside the variant: nothing to compare with
        return True
    return b is not None and len(a) == len(b) and all(torch.equal(x, y) for x, y in zip(a, b))


PROBES: tuple[Probe, ...] = (
    Probe("default dtype", torch.get_default_dtype, torch.set_default_dtype),
    Probe("torch RNG state", torch.get_rng_state, torch.set_rng_state, torch.equal),
    Probe("CUDA RNG state", _cuda_rng_get, _cuda_rng_set, _same_tensor_lists),
    Probe("Python random state", random.getstate, random.setstate),
    Probe("print options", lambda: _print_options(), _set_print_options),
    Probe("grad mode", torch.is_grad_enabled, torch.set_grad_enabled),
    Probe("anomaly mode", lambda: (torch.is_anomaly_enabled(), torch.is_anomaly_check_nan_enabled()), _set_anomaly),
    Probe(
        "deterministic algorithms",
        lambda: (torch.are_deterministic_algorithms_enabled(), torch.is_deterministic_algorithms_warn_only_enabled()),
        _set_deterministic,
    ),
    Probe("warn-always flag", torch.is_warn_always_enabled, torch.set_warn_always),
    Probe("float32 matmul precision", torch.get_float32_matmul_precision, torch.set_float32_matmul_precision),
    Probe(
        "cudnn.benchmark",
        lambda: torch.backends.cudnn.benchmark,
        lambda v: setattr(torch.backends.cudnn, "benchmark", v),
    ),
    Probe(
        "cudnn.deterministic",
        lambda: torch.backends.cudnn.deterministic,
        lambda v: setattr(torch.backends.cudnn, "deterministic", v),
    ),
    Probe("number of threads", torch.get_num_threads, torch.set_num_threads),
    Probe(
        "warning filters", _with_modules(lambda: list(warnings.filters)), _set_warning_filters, _same_warning_filters
    ),
    Probe("environment variables", _with_modules(lambda: dict(os.environ)), _set_environ, _same_environ),
    Probe("working directory", os.getcwd, os.chdir),
    Probe("sys.path", _with_modules(lambda: list(sys.path)), _set_sys_path, _same_sys_path),
)
if numpy is not None:
    PROBES += (Probe("NumPy random state", numpy.random.get_state, numpy.random.set_state, _same_numpy_state),)


def snapshot() -> dict[str, Any]:
    return {p.name: p.get() for p in PROBES}


def leaks(before: dict[str, Any]) -> list[str]:
    """Names of the probes whose value differs from ``before``."""
    return [p.name for p in PROBES if not p.same(before[p.name], p.get())]


def restore(before: dict[str, Any]) -> None:
    for p in PROBES:
        if not p.same(before[p.name], p.get()):
            p.set(before[p.name])
