# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Reversing a tensor with `x[::-1]`
#
# Coming from NumPy (or plain Python lists), you reverse a sequence with a negative step:
# `x[::-1]`. On a tensor the same line stops the program with
# `ValueError: step must be greater than zero`. The same goes for `x[::-2]` and for a negative
# step on any axis (`img[:, ::-1]` to mirror an image).

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Six values, reversed the NumPy way.


# %%
def broken(device):
    x = torch.arange(6.0, device=device)
    return x[::-1]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A NumPy array reverses without copying: `a[::-1]` is a view whose stride is negative, so it
# walks the same memory backwards. A PyTorch tensor's strides must be non-negative (the
# storage, the kernels and autograd's view tracking all assume it), so the indexing code checks
# the step of every slice and refuses anything below 1 before it builds a view. For the same
# reason `torch.from_numpy(a[::-1])` raises a ValueError about negative strides and asks for
# `a[::-1].copy()`.
#
# ## The fix
# `torch.flip(x, dims)` (or `x.flip(dims)`) reverses the listed axes. It is not a view: it
# copies the data, which is the price of having no negative strides. A negative step other than
# -1 needs one more slice, and the order matters: NumPy's `a[::-2]` starts from the *last*
# element, which is `x.flip(0)[::2]`; `x[::2].flip(0)` starts from the last *even* index and
# differs whenever the length is even.


# %%
def fixed(device):
    x = torch.arange(6.0, device=device)
    reversed_ = x.flip(0)
    every_other_from_end = x.flip(0)[::2]
    return reversed_, every_other_from_end


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))
    x = torch.arange(6.0)
    print("x[::2].flip(0) =", x[::2].flip(0), "is not x[::-2] =", x.flip(0)[::2])

# %% [markdown]
# ## Where it comes from
# The source post (torch 0.3, December 2017) was porting a NumPy segmentation loss to tensors
# and found that neither `[::-1]` nor a flip function existed, so its author wrote a flip by
# hand. Negative strides were first requested in pytorch/pytorch#229 and again in
# pytorch/pytorch#604 (January 2017), where the maintainers explained that the C backends would need
# deep changes; in 2018 they said negative striding was not planned at all. Instead
# `torch.flip` was added (pytorch/pytorch#7873, merged mid-2018): it is absent from 0.4.0 and
# present in 0.4.1, as users of projects pinned to 0.4.0 found out (e.g. mravanelli/SincNet#30,
# tankche1/IDeMe-Net#2). Early `flip` refused negative `dims` such as `flip(-1)`, so old code
# may spell the axis out. The request came back through the Python Array API standard
# (pytorch/pytorch#59786, 2021), was declined again in 2023 (pytorch/pytorch#99297: it would
# need negative strides throughout the internals), and a 2026 RFC (pytorch/pytorch#175240)
# proposes translating `[::-k]` into flips; on torch 2.13.0 `x[::-1]` still raises.

# %% [markdown]
# ## How the harness checks it
#
# The same refusal has a cousin that is not this pitfall: reversing the NumPy array first and
# converting it, `torch.from_numpy(a[::-1])`, raises a ValueError about the array's negative
# strides, at the conversion, not at the indexing.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S0


def symptom(run):
    """Indexing refused the negative step (a ValueError at the call, before any kernel runs)."""
    return run.raised(ValueError, r"step must be greater than zero")


def near_miss(device):
    return torch.from_numpy(np.arange(6.0)[::-1]).to(device)


def check(run, device):
    """Python's own slicing of the same numbers as a list is the reference: [5, 4, 3, 2, 1, 0]
    and [5, 3, 1]."""
    values = [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    reversed_, every_other_from_end = run.value
    torch.testing.assert_close(reversed_, torch.tensor(values[::-1], device=device))
    torch.testing.assert_close(every_other_from_end, torch.tensor(values[::-2], device=device))


CASE = Case(
    id="negative-step-slicing",
    title="Reversing a tensor with x[::-1]",
    kind="error",
    symptom_category="error",
    symptom_line="x[::-1] on a tensor raises ValueError: step must be greater than zero.",
    # From 1.13.1 on the matrix observes it; before that, the source post saw it on torch 0.3.
    # Tensors have never had negative strides, and the 2026 RFC (#175240) still describes the
    # ValueError: no release is known to accept a negative step.
    affects=(Affects(">=0.3", since="the source post observed it on torch 0.3 (December 2017)"),),
    devices=("cpu", "cuda"),
    sources=(S0.at("'torch does not support [::-1] and flip? then write a flip yourself'"),),
    tags=("shapes", "indexing", "slicing", "flip", "numpy"),
    references=(
        "https://github.com/pytorch/pytorch/issues/604",  # the 2017 request; maintainers: not planned
        "https://github.com/pytorch/pytorch/issues/59786",  # Array API asks for it again (2021), open
        "https://github.com/pytorch/pytorch/issues/99297",  # 2023: "won't be added in the near future"
        "https://github.com/pytorch/pytorch/issues/175240",  # 2026 RFC for syntactic sugar, open
        "https://github.com/pytorch/pytorch/pull/7873",  # torch.flip, first released in 0.4.1
        "https://docs.pytorch.org/docs/stable/generated/torch.flip.html",
    ),
)
