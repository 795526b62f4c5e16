# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A float class-index target for `CrossEntropyLoss`
#
# The labels are built the quick way, `target = torch.Tensor([1, 1])`, and the first call of
# `nn.CrossEntropyLoss()(scores, target)` stops with a `RuntimeError` about the target's
# dtype: it expected `Long` and got `Float`. On a GPU the same call stops with a
# `NotImplementedError` instead: the CUDA kernel has no version for a `Float` target.
# `torch.Tensor(...)` always makes a float tensor, whatever numbers it is given.

# %%
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The source post's own example: a batch of two samples over three classes, both labelled
# class 1, the labels written with the legacy `torch.Tensor` constructor.

# %%
SCORES = [[0.1, 0.8, 0.1], [0.4, 0.6, 0.0]]


def broken(device):
    scores = torch.tensor(SCORES, device=device)
    target = torch.Tensor([1, 1]).to(device)  # float32, not int64
    return nn.CrossEntropyLoss()(scores, target)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `CrossEntropyLoss` reads a target in one of two ways, decided by its shape. A target with
# the input's shape minus the class dimension, here `(N,)`, holds class **indices**: each
# entry picks one column of the scores, so it has to be an integer tensor (`int64`; recent
# releases also take `uint8`). A target with exactly the input's shape, here `(N, C)`, holds
# class **probabilities** and has to be floating point. That second reading only exists since
# torch 1.10; before it, every target was a tensor of indices. A float `(N,)` tensor is the
# first kind with the wrong dtype, so the loss refuses it. The opposite mistake is refused
# too: a one-hot `int64` target of shape `(N, C)` is read as probabilities and rejected for
# not being floating point.
#
# ## The fix
# Build the labels as integers: `torch.tensor([1, 1])` infers `int64` from Python ints, or
# convert with `target.long()`. Since 1.10, soft labels of the input's shape are the other
# legitimate form: a one-hot float target gives the same loss as the indices. Both are
# checked against the cross entropy written out by hand.


# %%
def fixed(device):
    scores = torch.tensor(SCORES, device=device)
    target = torch.tensor([1, 1], device=device)  # int64
    loss = nn.CrossEntropyLoss()(scores, target)
    as_probabilities = nn.CrossEntropyLoss()(scores, F.one_hot(target, 3).float())
    return {"indices": loss, "probabilities": as_probabilities}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's notes on the optimizer and loss write the loss's two arguments exactly like
# the broken code, labels made with `torch.Tensor([1, 1])`, and add that the loss "may require a
# long tensor". The probability reading of a same-shape float target arrived in torch 1.10:
# pytorch/pytorch#61044, listed in the 1.10 release notes as "added support for class probability
# targets", which closed the long-standing request #11959; the 1.10 documentation describes both
# target forms. pytorch/pytorch#145444 later spelled out in the docs that indices are integers and
# probabilities floats. The error itself is as old as the loss, so `affects` is left open at both
# ends. Its message is not: the version matrix's reports show "expected scalar type Long but found
# Float" up to 2.11.0 and "expected target dtype to be Long or Byte, but got Float" from 2.12.1,
# so the symptom matches the words both share (Long expected, Float found) and not a sentence. On
# CUDA the check is never reached: the kernel is chosen by the target's dtype first, and there is
# none for `Float`.

# %% [markdown]
# ## How the harness checks it
#
# The opposite mistake raises a `RuntimeError` that names `Long` too, and it is not this one:
# a one-hot `int64` target of the scores' shape is read as class probabilities and refused for
# not being floating point (Long found where Float was expected).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """On the CPU, a RuntimeError that names Long as the dtype expected and Float as the one
    found, in either release's wording ("... Long but found Float", "... Long or Byte, but got
    Float"). On CUDA, the NotImplementedError of nll_loss's kernel dispatch, which has no Float
    version ("nll_loss_forward_reduce_cuda_kernel_2d_index" not implemented for 'Float')."""
    if run.raised(RuntimeError, r"\bLong\b.*\b(?:found|got)\s+Float\b"):
        return "Long expected, Float found"
    if run.raised(NotImplementedError, r"nll_loss\w*\"? not implemented for 'Float'"):
        return "no kernel for a Float target"
    return False


def near_miss(device):
    scores = torch.tensor(SCORES, device=device)
    one_hot = F.one_hot(torch.tensor([1, 1], device=device), 3)  # int64, shape (N, C)
    return nn.CrossEntropyLoss()(scores, one_hot)


def check(run, device):
    """Both target forms give -log softmax(scores)[n, 1] averaged over the batch, computed in
    plain Python from the scores."""
    by_hand = sum(math.log(sum(math.exp(s) for s in row)) - row[1] for row in SCORES) / len(SCORES)
    expected = torch.tensor(by_hand, device=device)
    torch.testing.assert_close(run.value["indices"], expected)
    torch.testing.assert_close(run.value["probabilities"], expected)


CASE = Case(
    id="cross-entropy-target-dtype",
    title="A float class-index target for CrossEntropyLoss",
    kind="error",
    symptom_category="error",
    symptom_line="CrossEntropyLoss raises about the target's dtype: expected Long, got Float.",
    # Class indices have had to be an integer tensor in every release. The wording changed
    # between 2.11.0 ("expected scalar type Long but found Float") and 2.12.1 ("expected target
    # dtype to be Long or Byte, but got Float"), per the matrix reports; both name Long, then Float.
    # On CUDA the kernel's dispatch refuses it first, naming Float.
    affects=(
        Affects(device="cpu", form="Long expected, Float found"),
        Affects(device="cuda", form="no kernel for a Float target"),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Optimizer': the two arguments of the loss, 'may require a long tensor'"),),
    tags=("loss", "cross_entropy", "dtype", "target"),
    references=(
        "https://github.com/pytorch/pytorch/pull/61044",  # 1.10: float targets of the input's shape = probabilities
        "https://github.com/pytorch/pytorch/issues/11959",  # the feature request it closed
        "https://pytorch.org/docs/1.10.0/generated/torch.nn.functional.cross_entropy.html",
        "https://github.com/pytorch/pytorch/pull/145444",  # docs: indices are integers, probabilities floats
    ),
)
