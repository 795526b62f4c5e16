# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An in-place op cannot change a tensor's dtype
#
# `labels * 0.9 + 0.05` on an integer tensor of class labels works and returns floats, so you
# write the same label smoothing in place to save memory: `labels *= 0.9`. It stops with
# `RuntimeError: result type Float can't be cast to the desired output type Long`. The
# out-of-place and in-place spellings of the same arithmetic do not behave alike.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Integer class labels, smoothed in place.


# %%
def broken(device):
    labels = torch.tensor([0, 1, 1], device=device)  # int64
    labels *= 0.9
    labels += 0.05
    return labels


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Since type promotion (1.3), an arithmetic op first computes a *result type* from its
# operands: an int64 tensor times a Python float gives float32 (the default dtype), which is
# why `labels * 0.9` returns a new float tensor. An in-place op has no new tensor to return:
# it must write into `labels`, whose dtype is fixed. Writing a float result into int64 storage
# would silently truncate, so torch refuses any in-place op whose result type cannot be cast
# to the output's dtype under its casting rules (float to integer is such a cast). The same
# rule applies to `out=` arguments.
#
# Before 1.3 there was no promotion: the Python float was first cast to the tensor's type, so
# `labels *= 0.9` multiplied by `int(0.9) == 0` and silently zeroed the labels (the PR's own
# example: `torch.tensor(10) * 1.9` gave 10). In torch 0.3 (S0) the eight tensor types did not
# mix at all and every conversion had to be written by hand.
#
# ## The fix
# Make the dtype change explicit before working in place, or work out of place:
# `labels = labels.float()` then `*=`/`+=`, or `labels = labels * 0.9 + 0.05`.


# %%
def fixed(device):
    labels = torch.tensor([0, 1, 1], device=device)
    smoothed = labels.float()  # a new float32 tensor; in-place ops on it are fine
    smoothed *= 0.9
    smoothed += 0.05
    return smoothed


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1 lists the error message in its troubleshooting notes (there it came from a BatchNorm
# counter in a state dict, a case of its own: `state-dict-averaging-long-buffers`). S0, on
# torch 0.3, complains that the tensor types never convert into each other. Type promotion
# landed in pytorch/pytorch#22273 (released in 1.3), implementing the rules discussed in
# #9515; its description names both halves of this case: `int_tensor * float` now returns a
# float tensor, and `int_tensor *= float` now raises because the float result cannot be cast back
# into the integer tensor. The project's catalogue dates type promotion "since 1.5"; that is too
# late: the PR was merged in September 2019, before the 1.3.0 release, and the 1.3.1 release
# tracker (pytorch/pytorch#28919) was opened to fix correctness issues in "v1.3.0's Type
# Promotion", so the lower bound here is 1.3 (read there, not observed: the version matrix starts
# at 1.13.1).

# %% [markdown]
# ## How the harness checks it
#
# An in-place op cannot change a tensor's *shape* either, and that fails with a RuntimeError
# too: adding a `[2, 3]` tensor into the `[3]` labels in place. It is a broadcasting bug, not
# a dtype one, and the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S0, S1


def symptom(run):
    """The in-place multiply refuses to store a float result in the int64 tensor."""
    return run.raised(RuntimeError, r"can't be cast to the desired output type")


def near_miss(device):
    labels = torch.tensor([0.0, 1.0, 1.0], device=device)  # already float: no dtype problem
    labels += torch.full((2, 3), 0.05, device=device)  # output with shape [3] doesn't match [2, 3]
    return labels


def check(run, device):
    """Smoothed float32 labels [0.05, 0.95, 0.95], worked out by hand (0 -> 0.05, 1 -> 0.95), and
    the same as the out-of-place spelling, which promotes by itself."""
    assert run.value.dtype == torch.float32
    torch.testing.assert_close(run.value.cpu(), torch.tensor([0.05, 0.95, 0.95]))
    torch.testing.assert_close(torch.tensor([0, 1, 1], device=device) * 0.9 + 0.05, run.value)


CASE = Case(
    id="inplace-op-cannot-promote",
    title="An in-place op cannot change a tensor's dtype",
    kind="error",
    symptom_category="error",
    symptom_line="labels *= 0.9 on an integer tensor raises: result type Float can't be cast to Long.",
    # Type promotion arrived in 1.3 (#22273), and with it the error for in-place ops whose
    # promoted result type does not fit the tensor. The matrix observes it from 1.13.1 on; no
    # later change known.
    affects=(
        Affects(
            ">=1.3",
            since="PR #22273 (merged September 2019), released in 1.3.0: its "
            "description says int_tensor *= float now raises; the v1.3.1 tracker #28919 "
            "names 1.3.0's type promotion",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S0.at("the complaint that the eight tensor types never convert automatically (torch 0.3)"),
        S1.at("section 'Troubleshooting': result type Float can't be cast to the desired output type Long"),
    ),
    tags=("dtypes", "type_promotion", "inplace"),
    references=(
        "https://github.com/pytorch/pytorch/pull/22273",  # type promotion; int_tensor *= float errors
        "https://github.com/pytorch/pytorch/issues/9515",  # the promotion rules it implements
        "https://github.com/pytorch/pytorch/issues/28919",  # v1.3.1 tracker: fixes to 1.3.0's promotion
    ),
)
