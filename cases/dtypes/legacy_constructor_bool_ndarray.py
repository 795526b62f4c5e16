# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.FloatTensor(bool_array)` gave garbage (torch 0.3)
#
# A segmentation mask comes out of NumPy as a boolean array. On torch 0.3 you wrapped it in
# `torch.FloatTensor(mask)` to get 0/1 floats, and the visualised ground truth was noise:
# values like `3.9e-23` and `-7.6`, not zeros and ones, with no error. Today the same call
# gives the right 0/1 values, but its live cousin is still here: `torch.FloatTensor(3)` or
# `torch.Tensor(2, 3)` reads its integer arguments as a *size* and hands back uninitialised
# memory, where `torch.tensor([3.])` would have given the one number 3.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The post's conversion, then the cousin that is still live: a legacy constructor given one
# integer. Only the *shape* of that second tensor is recorded: its values are whatever was in
# memory, and no check may depend on them.


# %%
def broken(device):
    mask = np.array([[True, False], [False, True]])
    from_bool = torch.FloatTensor(mask).to(device)  # the legacy constructors are CPU types
    sized = torch.FloatTensor(3)  # an int is a size: 3 uninitialised floats, not [3.]
    return {"from_bool": from_bool, "FloatTensor(3).shape": tuple(sized.shape)}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The legacy constructors (`torch.Tensor`, `torch.FloatTensor`, ...) are overloaded: given a
# sequence they copy data, given integers they allocate a tensor of that size without
# initialising it, like `torch.empty`. NumPy's `bool_` was not among the dtypes torch 0.3 could
# convert, and on the 0.3.0 pip wheels the call did not fail: it behaved like the allocating
# overload given the array's shape, so the result had the right shape and memory garbage
# inside (#4288: "the same behavior as `torch.Tensor(size=2)`"). Builds from source
# raised a `TypeError` instead, and so did every release from 0.4 on, until bool support in
# the NumPy bridge (#18505) made the conversion work.
#
# The allocating overload never went away. `torch.FloatTensor(3)` has shape `(3,)`, and its
# contents are unspecified: often zeros in a fresh process, sometimes leftovers of a freed
# tensor, so code that "works" can silently change with the allocator's state. The S1 notes
# show the pattern in a custom BatchNorm (`torch.Tensor(num_features)`, filled only later).
#
# ## The fix
# Convert explicitly, with the dtype named: `torch.from_numpy(mask.astype(np.float32))` or
# `torch.tensor(mask, dtype=torch.float32)` (the post's own fix was `np.float32(labels)` first).
# Use `torch.tensor(data)` for data and `torch.zeros(n)` / `torch.empty(n)` when you mean a
# size, so the code says which one it is.


# %%
def fixed(device):
    mask = np.array([[True, False], [False, True]])
    from_bool = torch.tensor(mask, dtype=torch.float32, device=device)
    three_zeros = torch.zeros(3, device=device)  # a size, said so, and initialised
    return {"from_bool": from_bool, "zeros(3).shape": tuple(three_zeros.shape)}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S0, torch 0.3, December 2017) converted a boolean ground-truth mask with
# `torch.FloatTensor(Bool_Ndarray)`, saw noise, and fixed it with `np.float32(labels)` first. The
# same report reached pytorch/pytorch three times on 0.3.0.post4: #4288 (a maintainer found that
# only the pip wheels misbehaved; source builds raised `TypeError`), #5177 (closed in July 2018
# with the `TypeError` as the answer) and #6839. Bool arrays are converted to 0/1 since bool
# tensor support reached the NumPy bridge (#18505, 2019; downstream projects report 1.0.1 raising
# and 1.2 working). The case is *historical*: `affects` is `<0.4`, below every installable torch,
# so the symptom is never expected here. Today's legacy constructor converts the mask correctly,
# so the fix's check accepts the broken result as well and the case comes out `unverified` on
# every installable torch: nothing here can show the 0.3 garbage.
#
# The uninitialised-memory cousin is live on every version; it is recorded above by shape
# only, `(3,)` for `torch.FloatTensor(3)` where `torch.tensor([3.])` has shape `(1,)`.

# %% [markdown]
# ## How the harness checks it
#
# A wrong mask that is *not* this pitfall: the conversion is right, but the mask was inverted
# before it (`~mask`, or a `<` that should have been `>=`). The values are 0/1 floats, only
# swapped, and the symptom must not take a logic bug for the 0.3 garbage.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S0, S1


def symptom(run):
    """The 0.3 behaviour: no error and the mask's shape, but its values ignore the data: memory
    garbage (values other than 0 and 1), or all zeros where the memory happened to be fresh."""
    if run.error is not None:
        return False
    got = run.value["from_bool"].cpu()
    if got.shape != (2, 2):
        return False
    garbage = not bool(((got == 0) | (got == 1)).all())
    return garbage or not bool(got.any())


def near_miss(device):
    mask = np.array([[True, False], [False, True]])
    from_bool = torch.tensor(~mask, dtype=torch.float32, device=device)  # [[0, 1], [1, 0]]
    return {"from_bool": from_bool, "FloatTensor(3).shape": (3,)}


def check(run, device):
    """The mask as float32 0/1 values, written out by hand (True -> 1.0, False -> 0.0) and also
    converted the other way, through `np.float32` first (the source post's own fix). On today's
    torch the legacy constructor gives the same values, so this cannot tell the two apart here."""
    by_hand = torch.tensor([[1.0, 0.0], [0.0, 1.0]])
    mask = np.array([[True, False], [False, True]])
    torch.testing.assert_close(run.value["from_bool"].cpu(), by_hand)
    torch.testing.assert_close(run.value["from_bool"].cpu(), torch.from_numpy(mask.astype(np.float32)))


CASE = Case(
    id="legacy-constructor-bool-ndarray",
    title="torch.FloatTensor(bool_array) gave garbage (torch 0.3)",
    kind="historical",
    symptom_category="wrong-values",
    symptom_line="torch.FloatTensor(bool_array) gave garbage values on torch 0.3 instead of zeros and ones.",
    # Reported on the 0.3.0.post4 pip wheels (#4288, #5177, #6839). From 0.4 the call raised
    # TypeError ("can't convert np.ndarray of type numpy.bool_") instead; bool arrays are
    # converted to 0/1 from about 1.2 on. 0.3.1 was not checked.
    affects="<0.4",
    devices=("cpu", "cuda"),
    sources=(
        S0.at("the ground truth turned to noise after torch.FloatTensor(Bool_Ndarray); fix np.float32(labels)"),
        S1.at("section 'Layers': the custom BatchNorm allocates torch.Tensor(num_features) and fills it later"),
    ),
    tags=("dtypes", "legacy_constructor", "numpy", "bool", "uninitialized"),
    references=(
        "https://github.com/pytorch/pytorch/issues/4288",  # bool array read like a size, 0.3.0
        "https://github.com/pytorch/pytorch/issues/5177",  # same; later answered with TypeError
        "https://github.com/pytorch/pytorch/issues/6839",  # same report, 0.3.0.post4
        "https://github.com/pytorch/pytorch/pull/18505",  # bool tensors <-> numpy conversion
        "https://github.com/ranahanocka/MeshCNN/issues/33",  # TypeError on 1.0.1, fixed by 1.2
    ),
)
