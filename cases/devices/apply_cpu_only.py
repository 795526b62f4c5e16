# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `Tensor.apply_` works on CPU tensors only
#
# `t.apply_(fn)` runs a plain Python function on every element of `t`, in place. It is handy
# for a quick transform, and the code works in a CPU prototype. Move the model to the GPU and
# the same line stops with `TypeError: apply_ is only implemented on CPU tensors`. Even on the
# CPU it is the slowest way to transform a tensor: it calls back into Python once per element.

# %%
from typing import NamedTuple

import torch

from torch_pitfalls import observe


def square_plus_one(v):
    """A Python function of one number, the kind of thing one hands to apply_."""
    return v * v + 1


VALUES = [1.0, 2.0, 3.0]


class Applied(NamedTuple):
    """The tensor after apply_, and how many times Python was called back to compute it."""

    result: torch.Tensor
    python_calls: int


# %% [markdown]
# ## The broken code
# `apply_` on a tensor on `device`, counting how often the Python function runs.


# %%
def broken(device):
    calls = 0

    def fn(v):
        nonlocal calls
        calls += 1
        return square_plus_one(v)

    t = torch.tensor(VALUES, device=device)
    t.apply_(fn)  # on "cuda": TypeError, before fn is ever called
    return Applied(t, calls)


# %% [markdown]
# On the CPU it works, which is how the line got into the code. Note the count: the Python
# function ran once for each of the three elements. For a million-element tensor it runs a
# million times, one interpreter round-trip each.

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # Applied(result=tensor([ 2.,  5., 10.]), python_calls=3)

# %% [markdown]
# ## Why
# `apply_` is not a tensor kernel. It is a C++ loop in torch's Python bindings that reads each
# element through a CPU pointer, turns it into a Python number, calls the function, and writes
# the result back. A CUDA tensor's data lives in GPU memory, which that pointer cannot read, so
# the function checks the device first and raises `TypeError` for anything but the CPU. (A
# `meta` tensor, which has no data, is returned unchanged.) The same holds for its two-tensor
# sibling `map_`. Nothing of it is vectorised or parallel on any device, and it is not recorded
# by autograd.
#
# ## The fix
# Write the function with tensor operations, so that it runs as kernels on whatever device the
# tensor is on: here `t * t + 1` instead of `apply_(lambda v: v * v + 1)`. Our function is
# already written with arithmetic that tensors support, so the fix calls it once, on the whole
# tensor, and Python is called back once instead of once per element. Most element-wise
# Python functions have such a form (`torch.where` for branches, `torch.clamp`, and the like). If
# one truly has none, move the tensor to the CPU and back: `t.cpu().apply_(fn).to(t.device)`.
# That is slow, and it is explicit about it.


# %%
def fixed(device):
    calls = 0

    def fn(v):
        nonlocal calls
        calls += 1
        return square_plus_one(v)

    t = torch.tensor(VALUES, device=device)
    result = fn(t)  # the same function, called once on the whole tensor: t * t + 1, as tensor ops
    return Applied(result, calls)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes list `apply_(callable)` among the things a tensor can do. They add, in one
# line, that it only works on CPU tensors and should not be used where speed matters. The PyTorch
# documentation of `Tensor.apply_` says the same: it works only with CPU tensors, should not be
# used in code sections that require high performance, and applies the callable to each element.
# The check is in `torch/csrc/utils/tensor_apply.cpp`: today `TORCH_CHECK_TYPE(..., "apply_ is
# only implemented on CPU tensors")`, which surfaces in Python as `TypeError`. Older versions of
# that file threw the same `TypeError` with the same text. Since no version is known to have
# lifted the restriction, `affects` is open at both ends.

# %% [markdown]
# ## How the harness checks it
#
# Not every `TypeError` out of `apply_` is about the device. A function that forgets its
# `return` hands `None` back for each element, and `apply_` refuses that on the CPU too: a bug
# in the callable, not the CPU-only restriction.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1

EXPECTED = [2.0, 5.0, 10.0]  # 1*1+1, 2*2+1, 3*3+1, by hand


def symptom(run):
    """apply_ refused the device: a TypeError that names CPU tensors."""
    return run.raised(TypeError, r"apply_ is only implemented on CPU tensors")


def near_miss(device):
    def fn(v):
        v * v + 1  # computed, but never returned

    t = torch.tensor(VALUES, device="cpu")  # on the CPU, where apply_ is allowed
    t.apply_(fn)  # TypeError: must be real number, not NoneType
    return t


def check(run, device):
    """The values are 1*1+1, 2*2+1, 3*3+1 worked out by hand, and the Python function ran once
    for the whole tensor, counted by the same wrapper as in the broken code (not once per element)."""
    torch.testing.assert_close(run.value.result, torch.tensor(EXPECTED, device=device))
    assert run.value.python_calls == 1, f"Python was called back {run.value.python_calls} times"


CASE = Case(
    id="apply-cpu-only",
    title="Tensor.apply_ works on CPU tensors only",
    kind="error",
    symptom_category="error",
    symptom_line="t.apply_(fn) raises on the GPU: apply_ is only implemented on CPU tensors.",
    # Every version of the source seen raises TypeError for a non-CPU tensor (the older
    # `throw TypeError(...)` and today's TORCH_CHECK_TYPE alike); seen here only as the CPU
    # contrast, on 2.13.0. No change is known, so the range is open at both ends.
    affects="*",
    devices=("cuda",),
    sources=(
        S1.at(
            "section 'Autograd': torch.apply_(callable) runs the same operation on every "
            "element; CPU tensors only, and not for performance-critical code"
        ),
    ),
    tags=("devices", "cuda", "apply_", "python_callback"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.apply_.html",
        # apply_ and map_: the device check, in torch/csrc/utils/tensor_apply.cpp
        "https://github.com/pytorch/pytorch/blob/main/torch/csrc/utils/tensor_apply.cpp",
    ),
)
