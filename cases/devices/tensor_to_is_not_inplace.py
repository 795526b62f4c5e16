# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `t.to(...)` does not change `t`
#
# You write `model.to(device)` and `x.to(device)` on two lines that look alike. The model moves,
# but `x` stays where it was. Nothing is reported at that line. A few lines later the forward
# pass fails with a `RuntimeError` about tensors on different devices, or, after `x.to(torch.float32)`,
# about mismatched dtypes (`mat1 and mat2 must have the same dtype`). On a machine without a GPU
# the device half of this is invisible, since the tensor already lives on the CPU, but the dtype half
# shows the same mistake.

# %%
from typing import NamedTuple, Optional

import torch
from torch import nn

from torch_pitfalls import observe, seeded


class Placed(NamedTuple):
    """The tensor we meant to convert, and where and as what we meant it to end up (and, where
    the model was run on it, the model's output)."""

    tensor: torch.Tensor
    wanted_device: torch.device
    wanted_dtype: torch.dtype
    output: Optional[torch.Tensor] = None


# %% [markdown]
# ## The broken code
# Token ids arrive from the data pipeline as `int64` on the CPU. We want them on `device` and as
# `float32`, and call `.to` twice without keeping the result.


# %%
def broken(device):
    ids = torch.tensor([1, 2, 3])  # int64, CPU: what a data loader hands over
    ids.to(device)  # the moved copy is thrown away
    ids.to(torch.float32)  # so is the converted one
    return Placed(ids, torch.empty(0, device=device).device, torch.float32)


# %% [markdown]
# The mistake surfaces at the first op that meets a parameter of the model, with an error that
# points at the model, not at the `.to` line:

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    with seeded(0):
        layer = nn.Linear(3, 1)
    print(observe(lambda: layer(torch.tensor([1, 2, 3]))))  # RuntimeError: ... same dtype

# %% [markdown]
# ## Why
# A tensor's device and dtype are fixed properties of its storage, so no method can change them in
# place. `Tensor.to` builds a new tensor with the requested device and dtype and returns it; when
# nothing needs to change, it returns `self`. Either way, the name `ids` still refers to the
# original tensor unless you assign the result to it. `nn.Module.to` behaves differently. A module
# is a container, so `.to` converts each of its parameters and buffers and puts the result back
# into the same module. Its docstring says "This method modifies the module in-place", and it
# returns `self` only so that calls can be chained. The two calls look the same, but only the
# module version changes the object you called it on.
#
# ## The fix
# Assign the result: `ids = ids.to(device, torch.float32)`. For a module the bare call is enough.
# The code below leaves the module call unassigned on purpose, and the forward pass then
# succeeds.


# %%
def fixed(device):
    ids = torch.tensor([1, 2, 3])
    ids = ids.to(device, torch.float32)
    with seeded(0):
        layer = nn.Linear(3, 1)
    layer.to(device)  # a module is converted in place: no assignment needed
    out = layer(ids)
    return Placed(ids, torch.empty(0, device=device).device, torch.float32, out.detach())


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes list this in their troubleshooting section. Moving a tensor to the GPU cannot
# be done in place: for a model `model.to(device)` is enough, but a tensor must be written as
# `t = t.to(device)`, and getting it wrong ends in a `RuntimeError`. The documentation of
# `torch.Tensor.to` states the contract: it returns `self` when nothing changes and otherwise a
# copy, so the original is never touched. On the tracker, pytorch/pytorch#14068 ("cannot change
# the device of Tensor") drew the maintainers' answer that a device can never be changed in place.
# `Tensor.to` came with 0.4, the lower end of `affects`. The upper end is left open because no
# change is known.

# %% [markdown]
# ## How the harness checks it
#
# The same `mat1 and mat2 must have the same dtype` error also comes from data that arrives as
# `float64` (from NumPy) and is moved with its result kept, but never converted. The `.to` did
# change the tensor here; the dtype was simply never asked for.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The tensor is still the int64 it arrived as (and, on a GPU, still on the CPU) after the
    two `.to` calls: neither conversion reached it."""
    if run.error is not None:
        return False
    seen = run.value
    return seen.tensor.dtype == torch.int64 and (
        seen.tensor.dtype != seen.wanted_dtype or seen.tensor.device != seen.wanted_device
    )


def near_miss(device):
    values = torch.tensor([1.0, 2.0, 3.0], dtype=torch.float64)  # NumPy's default float
    values = values.to(device)  # assigned: moved, but still float64
    return Placed(values, torch.empty(0, device=device).device, torch.float32)


def check(run, device):
    """The ids are float32 [1., 2., 3.] on `device`, written by hand (`assert_close` compares
    dtype and device too); and the output is the same affine map written out, w1*1 + w2*2 +
    w3*3 + b, with the weights of the same seeded layer."""
    seen = run.value
    torch.testing.assert_close(seen.tensor, torch.tensor([1.0, 2.0, 3.0], device=device), rtol=0, atol=0)
    assert seen.output is not None, "the model was never run on the ids"
    with seeded(0):
        layer = nn.Linear(3, 1)
    w, b = layer.weight.detach()[0].to(device), layer.bias.detach().to(device)
    torch.testing.assert_close(seen.output, w[0] * 1.0 + w[1] * 2.0 + w[2] * 3.0 + b)


CASE = Case(
    id="tensor-to-is-not-inplace",
    title="t.to(...) does not change t",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="x.to(device) leaves x where it was; a later line fails on mixed devices or dtypes.",
    # Tensor.to arrived in 0.4 and has always returned its result, never changed `self`;
    # on a CPU the case shows it through the dtype. No release is known to change it.
    affects=(Affects(">=0.4", since="the 0.4.0 release notes, which introduced Tensor.to"),),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "Troubleshooting: a tensor cannot be moved to the GPU in place; model.to(device) is enough, a tensor needs t = t.to(device)"
        ),
    ),
    tags=("devices", "to", "inplace", "dtype"),
    references=(
        # "If self already has the correct dtype and device, self is returned. Otherwise, the
        # returned tensor is a copy of self":
        "https://pytorch.org/docs/stable/generated/torch.Tensor.to.html",
        # a maintainer: "you can never change device in-place"; .to gives a new tensor
        "https://github.com/pytorch/pytorch/issues/14068",
    ),
)
