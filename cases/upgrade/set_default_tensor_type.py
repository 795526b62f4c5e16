# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.set_default_tensor_type` is deprecated
#
# A physics or scientific-computing script starts with
# `torch.set_default_tensor_type(torch.DoubleTensor)` so that every tensor it creates is float64
# (or with `torch.cuda.FloatTensor` to put them on the GPU). On 2.0 and before it runs
# silently. From 2.1 the call prints `UserWarning: torch.set_default_tensor_type() is deprecated
# as of PyTorch 2.1, please use torch.set_default_dtype() and torch.set_default_device() as
# alternatives.` The setting still takes effect.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The default is restored afterwards, through `set_default_dtype`, which puts back the default
# tensor type along with the dtype and does not warn.


# %%
def broken(device):
    before = torch.get_default_dtype()
    try:
        torch.set_default_tensor_type(torch.DoubleTensor)  # every new float tensor is float64
        x = torch.tensor([0.1, 0.2], device=device)
        return x.dtype, torch.zeros(1, device=device).dtype
    finally:
        torch.set_default_dtype(before)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The legacy tensor types (`torch.FloatTensor`, `torch.cuda.DoubleTensor`, ...) bundle a dtype
# and a device into one global default. pytorch/pytorch#53124 listed what is wrong with it (a
# global that breaks libraries, built on the legacy constructors, duplicating
# `set_default_dtype`); once `torch.set_default_device` existed (2.0) both halves had a
# replacement, and the maintainers deprecated the old call for 2.1 (said in the review of
# pytorch/pytorch#99521). The warning comes from C++ and torch prints it once per process.
#
# ## The fix
# Set the dtype with `torch.set_default_dtype(torch.float64)`, available on every release. A
# script that used a CUDA tensor type also calls `torch.set_default_device("cuda")`, which
# exists only from 2.0: on older releases guard it with `hasattr(torch, "set_default_device")`.
# The two are not exactly equivalent for the legacy `torch.Tensor(...)` constructor on CUDA
# (pytorch/pytorch#132483).


# %%
def fixed(device):
    before = torch.get_default_dtype()
    try:
        torch.set_default_dtype(torch.float64)
        x = torch.tensor([0.1, 0.2], device=device)
        return x.dtype, torch.zeros(1, device=device).dtype
    finally:
        torch.set_default_dtype(before)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#53124 (2021) laid out the plan to deprecate and remove
# `torch.set_default_tensor_type`; in the review of pytorch/pytorch#99521 (April 2023) a
# maintainer wrote that it should no longer be used and would be deprecated, and 2.1 shipped the
# C++ warning (`python -m torch_pitfalls.surface diff` lists the new native message between 2.0.1 and
# 2.1.2; the 2.1.0 notes list the deprecation). The docs only gained the note later
# (pytorch/pytorch#115041). Downstream: DeepXDE's PyTorch backend switched to
# `set_default_device` behind a version test (lululxvi/deepxde#1530), torch_xla replaced its
# calls (pytorch/xla#5211), and Llama 3's example scripts print it (meta-llama/llama3#83).
# Observed with this project's venvs: silent on 1.13.1 and 2.0.1, a `UserWarning` on 2.1.2,
# 2.2.2, 2.3.1, 2.4.1, 2.6.0, 2.13.0 and 2.15.0. The function had not been removed as of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Building a tensor from a tensor with `torch.tensor(t)` warns with a `UserWarning` too (copy it
# with `clone().detach()`): a construction warning about something else.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The C++ warning that set_default_tensor_type is deprecated."""
    return run.warned(UserWarning, r"set_default_tensor_type\(\)? is deprecated")


def near_miss(device):
    t = torch.ones(2, device=device)
    return torch.tensor(t)  # UserWarning: to copy construct from a tensor ...


def check(run, device):
    """Both new tensors are float64, the dtype the script asked for (read from the tensors,
    not from the setting), and nothing warned: the deprecated call sets the same default, so
    the missing warning tells the fix apart."""
    assert run.value == (torch.float64, torch.float64), f"new tensors are {run.value}"
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="set-default-tensor-type",
    title="torch.set_default_tensor_type is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.set_default_tensor_type warns that it is deprecated, from torch 2.1.",
    affects=(
        Affects(
            versions=">=2.1",
            reason="set_default_tensor_type warns from C++ that it is deprecated as of 2.1 "
            "(observed 2.1.2 to 2.15.0; silent on 1.13.1 and 2.0.1)",
            issue="https://github.com/pytorch/pytorch/issues/53124",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.1.0").at(
            "Deprecations: torch.set_default_tensor_type, in favour of set_default_dtype and set_default_device"
        ),
    ),
    tags=("upgrade", "dtype", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/issues/53124",  # plan: deprecate and remove it
        "https://github.com/pytorch/pytorch/pull/99521",  # maintainers' decision to deprecate it (review comment)
        "https://github.com/pytorch/pytorch/pull/115041",  # the docs gain the deprecation note
        "https://github.com/lululxvi/deepxde/pull/1530",  # downstream: DeepXDE's backend
        "https://github.com/pytorch/xla/pull/5211",  # downstream: torch_xla
        "https://github.com/meta-llama/llama3/issues/83",  # downstream: Llama 3's example scripts
    ),
)
