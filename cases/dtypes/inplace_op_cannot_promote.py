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

from harness import Case, observe
from harness.sources import S0, S1

CASE = Case(
    id="inplace-op-cannot-promote",
    title="An in-place op cannot change a tensor's dtype",
    kind="error",
    # Type promotion arrived in 1.3 (#22273), and with it the error for in-place ops whose
    # promoted result type does not fit the tensor. Observed on 2.13.0; no later change known.
    affects=">=1.3",
    devices=("cpu", "cuda"),
    sources=(
        S0.at("the complaint that the eight tensor types never convert automatically (torch 0.3)"),
        S1.at("section 'Troubleshooting': result type Float can't be cast to the desired output type Long"),
    ),
    tags=("dtypes", "type_promotion", "inplace"),
    references=(
        "https://github.com/pytorch/pytorch/pull/22273",  # type promotion; int_tensor *= float errors
        "https://github.com/pytorch/pytorch/issues/9515",  # the promotion rules it implements
    ),
)

# %% [markdown]
# ## The broken code
# Integer class labels, smoothed in place.

# %%
def broken(device):
    labels = torch.tensor([0, 1, 1], device=device)  # int64
    labels *= 0.9
    labels += 0.05
    return labels


def symptom(run):
    """The in-place multiply refuses to store a float result in the int64 tensor."""
    return run.raised(RuntimeError, r"can't be cast to the desired output type")


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
    # By hand: 0 -> 0.05, 1 -> 0.95.
    torch.testing.assert_close(smoothed.cpu(), torch.tensor([0.05, 0.95, 0.95]))
    # The out-of-place spelling promotes by itself and agrees.
    torch.testing.assert_close(labels * 0.9 + 0.05, smoothed)
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
# float tensor, and `int_tensor *= float` now raises because the float result cannot be cast
# back into the integer tensor. Observed on torch 2.13.0 (CPU); the CUDA side was not observed
# by this project's runs (the check happens before any kernel runs, on every device).
