# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `Tensor.storage()` warns that `TypedStorage` is deprecated
#
# A helper checks whether two tensors share memory by comparing
# `a.storage().data_ptr()` with `b.storage().data_ptr()`, and counts the elements the storage
# holds with `a.storage().size()`. On 1.13 it runs silently. After an upgrade to 2.0 the first
# call in the process prints `UserWarning: TypedStorage is deprecated. It will be removed in
# the future and UntypedStorage will be the only storage class`, pointing at the helper's
# line, and the warning comes back in every release since. Libraries that call `.storage()`
# internally (memory reporters, serializers, summary tools) print it on behalf of their users.

# %%
import contextlib

import torch

from torch_pitfalls import observe

# %% [markdown]
# Since 2.0.1 torch prints this warning only the first time in a process, so a test suite sees
# it once at most. The case asks torch to warn on every call while `broken` runs (the switch
# torch's own tests use, present from 2.0), so that every run shows what the first call of a
# fresh script shows; the switch is put back afterwards.


# %%
@contextlib.contextmanager
def _warn_every_call():
    storage = torch.storage
    if not hasattr(storage, "_set_always_warn_typed_storage_removal"):
        yield  # 1.13: nothing to warn about
        return
    before = storage._get_always_warn_typed_storage_removal()
    storage._set_always_warn_typed_storage_removal(True)
    try:
        yield
    finally:
        storage._set_always_warn_typed_storage_removal(before)


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    x = torch.arange(6.0, device=device)
    tail = x[2:]  # a view: same memory, offset by two elements
    with _warn_every_call():
        shares = tail.storage().data_ptr() == x.storage().data_ptr()
        elements = tail.storage().size()  # a TypedStorage counts elements
    return shares, elements


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A tensor's memory used to be described by a storage class per dtype (`FloatStorage`,
# `DoubleStorage`, ...). The C++ storage lost its dtype in 2020 (pytorch/pytorch#38870), and in
# 1.11 the Python per-dtype classes became wrappers around an untyped byte storage, kept for
# compatibility (pytorch/pytorch#62030). For 2.0 torch deprecated the typed wrapper
# (pytorch/pytorch#85302: warn for at least one release before removing it) and added
# `Tensor.untyped_storage()`, which returns the byte buffer itself. `.storage()`
# still returns a `TypedStorage`, so each call goes through the deprecated class and warns.
#
# ## The fix
# Ask for the untyped storage. It counts **bytes**, not elements: `untyped_storage().size()`
# of six float32 is 24, so a port that only renames the call changes the number it computes;
# divide `nbytes()` by `element_size()`. `untyped_storage()` does not exist on 1.13 (where
# `.storage()` does not warn), so code that supports both guards the call.


# %%
def _storage(t):
    # untyped_storage() appeared in 2.0; on 1.13 .storage() is the only spelling and is quiet
    return t.untyped_storage() if hasattr(t, "untyped_storage") else t.storage()


def fixed(device):
    x = torch.arange(6.0, device=device)
    tail = x[2:]
    shares = _storage(tail).data_ptr() == _storage(x).data_ptr()
    elements = _storage(tail).nbytes() // tail.element_size()  # bytes -> elements
    return shares, elements


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#85302 planned the removal of `TypedStorage` with a release of warnings
# first; the PyTorch 2.0.0 notes list the deprecation, and pytorch/pytorch#89224 asked for the
# warning to name the replacement, which became the public `Tensor.untyped_storage()`. The
# history before it, read in the wheels: pytorch/pytorch#38870 ("Remove datatype from Storage
# and StorageImpl", May 2020) removed the dtype from the C++ storage, and the 1.5.1 wheel's
# `c10/core/StorageImpl.h` still has a `data_type_` member where the 1.6.0 one has none;
# pytorch/pytorch#62030 ("Re-implement Python storages as wrappers around an untyped storage")
# made the Python classes wrappers: in the 1.10.2 wheel `torch.FloatStorage` is still a C class
# of its own, in the 1.11.0 wheel it subclasses `_TypedStorage`, whose `_storage` is an
# `_UntypedStorage` (1.13.1 has the public name, `torch.TypedStorage`). 2.0.0
# warned on every call; pytorch/pytorch#98777 (in the 2.0.1 notes, "Warn once for TypedStorage
# deprecation") made it once per process. Downstream, DGL tracked its `.storage()` calls in
# dmlc/dgl#5104, torchinfo's `summary()` printed it for every user (TylerYep/torchinfo#238),
# and hivemind's compression code did too (learning-at-home/hivemind#563). Observed with this
# project's venvs: silent on 1.13.1, a `UserWarning` on 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1,
# 2.6.0, 2.13.0 and 2.15.0; the class has not been removed as of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Not every `UserWarning` about shared memory is this one. `torch.from_numpy` on a read-only
# NumPy array warns too (the tensor shares the array's memory but torch cannot keep it
# read-only): a real warning about storage, not about the deprecated class.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """`.storage()` warned that TypedStorage is deprecated."""
    return run.warned(UserWarning, r"TypedStorage is deprecated")


def near_miss(device):
    import numpy as np

    a = np.arange(6.0)
    a.flags.writeable = False
    return torch.from_numpy(a)  # UserWarning: the given NumPy array is not writable


def check(run, device):
    """The view shares its base's memory and that memory holds the base's six elements (the
    numbers the old helper computed, worked out from the base itself), and nothing warned: the
    broken helper computes the same numbers, so the missing warning tells the fix apart."""
    shares, elements = run.value
    assert shares is True, "a view shares its base's storage"
    x = torch.arange(6.0, device=device)
    assert elements == x.numel(), f"{elements} elements, expected {x.numel()}"
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="typed-storage-deprecated",
    title="Tensor.storage() warns that TypedStorage is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="Tensor.storage() warns that TypedStorage is deprecated, from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="Tensor.storage() returns a TypedStorage, deprecated in 2.0: a UserWarning "
            "(observed from 2.0.1 to 2.15.0; silent on 1.13.1)",
            issue="https://github.com/pytorch/pytorch/issues/85302",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.0.0").at("Deprecations: TypedStorage and its subclasses, Tensor.storage()"),),
    tags=("upgrade", "storage", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/issues/85302",  # plan: remove TypedStorage, warn first
        "https://github.com/pytorch/pytorch/pull/38870",  # 2020: the C++ StorageImpl loses its dtype
        "https://github.com/pytorch/pytorch/pull/62030",  # 1.11: Python typed storages wrap an untyped one
        "https://github.com/pytorch/pytorch/issues/89224",  # the warning should name untyped_storage()
        "https://github.com/pytorch/pytorch/pull/98777",  # 2.0.1: warn once per process
        "https://github.com/dmlc/dgl/issues/5104",  # downstream: DGL's Tensor.storage() calls
        "https://github.com/TylerYep/torchinfo/issues/238",  # downstream: torchinfo summary() warns
        "https://github.com/learning-at-home/hivemind/issues/563",  # downstream: hivemind compression
    ),
)
