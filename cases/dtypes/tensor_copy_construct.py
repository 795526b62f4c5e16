# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.tensor(existing_tensor)` warns
#
# A helper "makes sure" its input is a tensor with `torch.tensor(value)`. Fed a list it is
# silent; fed a tensor it prints `UserWarning: To copy construct from a tensor, it is
# recommended to use sourceTensor.detach().clone() ...` on every call. The warning is also a
# hint that the call does more than it seems: it copies the data and cuts the autograd graph.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A non-leaf tensor (it requires grad) passed to `torch.tensor`.


# %%
def broken(device):
    weights = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    scaled = weights * 2
    return torch.tensor(scaled)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.tensor(data)` is a *constructor from data*: it always copies, and the result is a new
# leaf that does not require grad (unless you pass `requires_grad=True`). For a list or a NumPy
# array that is what you want. For a tensor it means a full copy and a silent detach from the
# graph, and readers of the code can't tell whether either was intended. Torch therefore warns
# and points to the spelling that says it: `t.detach().clone()` (drop the graph, copy the
# data), or `t.detach().clone().requires_grad_(True)` for a new trainable leaf. If all you want
# is "a tensor, whatever I was given", use `torch.as_tensor(value)`, which reuses an existing
# tensor without copying (and without warning).
#
# ## The fix
# Say what you mean: `scaled.detach().clone()`.


# %%
def fixed(device):
    weights = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    scaled = weights * 2
    return scaled.detach().clone()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes met this warning while wrapping values with `torch.tensor` in code around
# `save_for_backward`; their remedy, replacing `torch.tensor` with `torch.is_tensor`, silences it
# only by no longer building a tensor at all. The warning was added in pytorch/pytorch#11815
# (September 2018, first released in 1.0), the change that made the tensor constructors detach
# their result from the source; the `torch.tensor` docs (1.10 page) state that `torch.tensor(x)`
# is equivalent to `x.clone().detach()`, and today's message recommends `detach().clone()`, which
# detaches first so the copy is never recorded by autograd. In #23495 a maintainer answers "why
# warn?" with `torch.as_tensor` for the convert-if-needed use.

# %% [markdown]
# ## How the harness checks it
#
# `torch.tensor` has another `UserWarning` that is not this one: given a *list of NumPy
# arrays* (one per sample, collected in a loop) it warns that the conversion is extremely
# slow. Nothing is copied from a tensor there; stack the arrays with `np.stack` first.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """torch.tensor warns that it is being used to copy a tensor."""
    return run.warned(UserWarning, r"copy construct from a tensor")


def near_miss(device):
    rows = [np.array([1.0, 2.0]), np.array([3.0, 4.0])]  # a list of ndarrays
    return torch.tensor(rows, device=device)  # UserWarning: ... extremely slow


def check(run, device):
    """The values 2 * [1, 2, 3] worked out by hand, in a leaf outside the graph, and no warning:
    `torch.tensor(scaled)` gives the same values, and only its warning tells it apart."""
    torch.testing.assert_close(run.value.cpu(), torch.tensor([2.0, 4.0, 6.0]))
    assert not run.value.requires_grad and run.value.grad_fn is None
    assert not run.warnings, f"the copy warned: {run.warnings[0].message}"


CASE = Case(
    id="tensor-copy-construct",
    title="torch.tensor(existing_tensor) warns",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.tensor(existing_tensor) warns to use detach().clone() on every call.",
    # The warning was added by #11815 (September 2018, first released in 1.0). Observed on
    # 2.13.0; its advice changed from clone().detach() to detach().clone(), its category never.
    affects=(Affects(">=1.0", since="PR #11815 added the warning (September 2018, first released in 1.0.0)"),),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Troubleshooting': UserWarning: To copy construct from a tensor, ... (in save_for_backward code)"
        ),
    ),
    tags=("dtypes", "tensor_constructor", "copy", "autograd"),
    references=(
        "https://github.com/pytorch/pytorch/pull/11815",  # detach in constructors, adds the warning
        "https://github.com/pytorch/pytorch/issues/23495",  # "why warn?": use torch.as_tensor instead
        "https://pytorch.org/docs/1.10/generated/torch.tensor.html",  # torch.tensor(x) == x.clone().detach()
    ),
)
