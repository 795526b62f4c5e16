# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `loss.data[0]` on a loss that has no element 0
#
# An older training script, or a loop copied from a 2017 tutorial, runs its first forward and
# backward pass and then stops at the line that records the loss: `IndexError: invalid index of a
# 0-dim tensor. Use tensor.item() ...`. The model trained one step; only reading the number failed.
# The same line sits in countless repositories, often before the checkpoint and evaluation code,
# so nothing after it ever runs on a current torch.

# %%
import torch
import torch.nn.functional as F

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One optimisation step of a small regression, then the running loss is updated the old way:
# `loss.data[0]`, "the first element of the loss".


# %%
def one_step(device):
    with seeded(0):
        x, y = torch.randn(8, 3, device=device), torch.randn(8, 1, device=device)
        model = torch.nn.Linear(3, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    loss.backward()
    optimizer.step()
    return loss, model


def broken(device):
    loss, _ = one_step(device)
    running_loss = 0.0
    running_loss += loss.data[0]  # how 0.3 read the number out of a one-element loss
    return running_loss


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A loss with the default `reduction="mean"` is one number. Up to torch 0.3 a reduction returned
# a tensor of shape `(1,)`, and `loss.data[0]` took that single element out of the `Variable`.
# Since 0.4 a full reduction returns a *0-dimensional* tensor, shape `()`: a scalar with no axis
# at all, so there is no index 0 to take. 0.4 still allowed the index with a `UserWarning` ("This
# will be an error in PyTorch 0.5"); from 1.0 on it is an `IndexError`. `loss.data` does not help:
# it is the same 0-dim tensor, detached.
#
# ## The fix
# `loss.item()` returns the value as a Python float (it also leaves no graph behind, so a running
# sum of floats does not keep every step's graph alive). `float(loss)` does the same.


# %%
def fixed(device):
    loss, _ = one_step(device)
    running_loss = 0.0
    running_loss += loss.item()
    return running_loss


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# PyTorch 0.4.0 merged `Variable` into `Tensor` and made full reductions return 0-dim tensors;
# its migration guide's section on accumulating losses names `total_loss += loss.data[0]` as the
# old pattern and `loss.item()` as the new one. pytorch/pytorch#6061 (a 0.4 pre-release, March
# 2018) shows the warning on `train_loss += loss.data[0]`, and the answer there calls it a side
# effect of the merge; torch's own loss plugin still read `loss[0]` in July 2018
# (pytorch/pytorch#9142, fixed by #9143). From 1.0 the warning is an error:
# facebookresearch/deepcluster#26 (2019) stops at `losses.update(loss.data[0], ...)`, and the
# same `IndexError` is reported against many repositories written for 0.3
# (Sundrops/video-caption.pytorch#5, foolwood/pytorch-slimming#12).

# %% [markdown]
# ## How the harness checks it
# Indexing past the end of a one-element tensor raises an `IndexError` too ("index 1 is out of
# bounds for dimension 0 with size 1"): that is an off-by-one on a real axis, not a scalar
# indexed as if it had one, and the symptom must refuse it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """An IndexError about indexing a 0-dim tensor."""
    return run.raised(IndexError, r"invalid index of a 0-dim tensor")


def near_miss(device):
    """An index past the end of a one-element tensor: another IndexError."""
    return torch.ones(1, device=device)[1]


def check(run, device):
    """The running loss is the first step's mean squared error, computed again by hand as
    ((x @ w.T + b - y) ** 2).mean() with the model's weights before the step."""
    with seeded(0):
        x, y = torch.randn(8, 3, device=device), torch.randn(8, 1, device=device)
        model = torch.nn.Linear(3, 1).to(device)
    expected = ((x @ model.weight.detach().T + model.bias.detach() - y) ** 2).mean().item()
    assert isinstance(run.value, float), type(run.value)
    assert abs(run.value - expected) < 1e-5, (run.value, expected)


CASE = Case(
    id="loss-indexed-as-one-element",
    title="`loss.data[0]` on a loss that has no element 0",
    kind="error",
    symptom_category="error",
    symptom_line="IndexError: invalid index of a 0-dim tensor, at loss.data[0] after the first training step.",
    # 0.4 made full reductions 0-dim and warned on indexing them ("This will be an error in
    # PyTorch 0.5": pytorch/pytorch#6061, #9142); 0.5 was released as 1.0, where it raises.
    affects=(
        Affects(
            ">=1.0",
            since="pytorch/pytorch#6061 and #9142: on 0.4 indexing a 0-dim tensor warned that it would be an error "
            "in the next release (0.5, released as 1.0); facebookresearch/deepcluster#26 shows the IndexError on 1.x",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch 0.4.0 Migration Guide: accumulating losses (loss.data[0] becomes loss.item())",
            url="https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",
        ),
        Source(
            title="pytorch/pytorch#6061: UserWarning: invalid index of a 0-dim tensor (train_loss += loss.data[0])",
            url="https://github.com/pytorch/pytorch/issues/6061",
        ),
    ),
    tags=("legacy_api", "training_loop", "item"),
    references=(
        "https://github.com/pytorch/pytorch/issues/9142",  # torch's own loss plugin read loss[0]
        "https://github.com/pytorch/pytorch/pull/9143",  # ... and was changed to loss.item()
        "https://github.com/facebookresearch/deepcluster/issues/26",  # the IndexError on 1.x
        "https://github.com/Sundrops/video-caption.pytorch/issues/5",
        "https://github.com/foolwood/pytorch-slimming/issues/12",
    ),
)
