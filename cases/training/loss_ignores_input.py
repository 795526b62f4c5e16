# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A feature the model never sees
#
# A tabular regression model trains, its loss falls and then stops at a floor it should not
# have: the targets are an exact linear function of the features, yet the loss will not go below
# 2.9. Every layer gets gradients, every weight moves. One input column simply never reaches the
# model: a slice in the data path, written for an older layout of the table, cuts it off before
# the forward pass. Backpropagating to the *inputs* shows it at once: that column's gradient is
# exactly zero.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# The table used to start with a row-id column, and the training code drops it with `x[:, 1:]`.
# The loader has since been changed to drop the id itself, so the 8 columns that arrive are all
# features, and the slice now removes the first real one. The model was sized to whatever the
# slice returned (7 inputs), so no shape error ever appeared. The function charts the
# dependencies the way a debugger would: it makes the batch a leaf that requires grad,
# backpropagates the loss, and sums the absolute input gradient per column; then it trains for
# 200 steps.

# %%
W_TRUE = [2.0, -1.0, 0.5, 1.5, -2.0, 1.0, 0.25, -0.5]  # column 0 matters most
STEPS = 200


def table(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(128, len(W_TRUE), generator=g)
    y = x @ torch.tensor(W_TRUE).unsqueeze(1)
    return x.to(device), y.to(device)


def chart_and_train(model, features_of, x, y):
    probe = x.clone().requires_grad_(True)
    F.mse_loss(model(features_of(probe)), y).backward()
    input_grad = probe.grad.abs().sum(dim=0)  # how much each column moves the loss
    model.zero_grad()
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(features_of(x)), y)
        loss.backward()
        opt.step()
    return {"input_grad": input_grad, "final_loss": loss.item()}


def broken(device):
    with seeded(0):
        model = nn.Linear(len(W_TRUE) - 1, 1).to(device)  # sized to fit the slice
    return chart_and_train(model, lambda x: x[:, 1:], *table(device))  # "drop the id column"


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A slice is part of the graph like any other operation: its backward routes the incoming
# gradient to the columns it kept and writes exact zeros into the columns it dropped. So the
# gradient of the loss with respect to a dropped input is 0, not small, on every sample, and no
# amount of training can make the model use that column. Nothing errs, because the model was
# built to fit the shape the slice produced. The missing column's share of the target, `2 · x₀`,
# stays unexplained, so the loss settles near its variance, `4 · var(x₀) ≈ 3` (2.9 on this
# batch, where the other columns happen to explain a sliver of it). A variable name reused for
# two tensors (`x = encoder(x)` and then a loss on the wrong `x`) or a head fed the same branch
# twice cut the graph the same way.
#
# ## The fix
# Slice the data in one place, for the layout it actually has, and size the model from the data
# (`in_features = x.shape[1]`). Then, once per new pipeline, chart the dependencies: set
# `requires_grad` on a batch, backpropagate a loss, and check that every input column gets a
# non-zero gradient. The check recomputes the input gradient by hand from the untrained weights:
# `d loss / d x = (2/N) (x Wᵀ + b - y) W`.


# %%
def fixed(device):
    x, y = table(device)
    with seeded(0):
        model = nn.Linear(x.shape[1], 1).to(device)  # sized from the data
    return chart_and_train(model, lambda x: x, x, y)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Andrej Karpathy's "A Recipe for Training Neural Networks" (2019) has a step called "use
# backprop to chart dependencies": make the loss depend on one thing, run backward to the input,
# and check that the gradient is non-zero exactly where it should be. He introduces it for code
# that mixes information across the batch, and it finds a column that never reaches the model
# just as well. torchtest2's `input_dependency` check automates it: every input tensor, and
# every feature of a float input, must influence the output; its report names a wrong slice or a
# variable reused by mistake as the usual causes. The behaviour of slicing under autograd is the
# same on every torch release.

# %% [markdown]
# ## How the harness checks it
# A zero gradient on a *weight* is a different finding. A column that is all zeros in the data
# gives its weight a zero gradient (its input is 0), but the input's own gradient is `(2/N)(ŷ -
# y) W`, not 0: the model does see the column, there is just nothing in it. The symptom looks at
# the input gradient, and does not claim that case.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Some input columns have an input gradient of exactly 0 while others do not, and the loss
    stays well above 0 after training."""
    if run.error is not None:
        return False
    grad = run.value["input_grad"]
    return bool((grad == 0).any()) and bool((grad > 0).any()) and run.value["final_loss"] > 0.1


def near_miss(device):
    """Every column reaches the model, but column 0 is all zeros in this batch."""
    x, y = table(device)
    x[:, 0] = 0
    with seeded(0):
        model = nn.Linear(x.shape[1], 1).to(device)
    return chart_and_train(model, lambda x: x, x, y)  # y still holds 2·x0: the loss stays high


def check(run, device):
    """Every column's input gradient is non-zero and equals the one written out by hand from the
    untrained weights; after training the loss is below 1e-4."""
    assert run.error is None, f"raised {run.error!r}"
    x, y = table(device)
    with seeded(0):
        start = nn.Linear(x.shape[1], 1).to(device)
    with torch.no_grad():
        residual = x @ start.weight.T + start.bias - y
        by_hand = ((2 / len(x)) * residual @ start.weight).abs().sum(dim=0)
    assert run.value["input_grad"].shape == by_hand.shape, "not every column reached the model"
    torch.testing.assert_close(run.value["input_grad"], by_hand, rtol=1e-5, atol=1e-5)
    assert bool((run.value["input_grad"] > 0).all()), run.value["input_grad"]
    assert run.value["final_loss"] < 1e-4, run.value["final_loss"]


def stable(value):
    """Which columns get no gradient, and the final loss to 2 significant digits."""
    return {
        "zero_columns": [i for i, g in enumerate(value["input_grad"].tolist()) if g == 0],
        "final_loss": float(f"{value['final_loss']:.2g}"),
    }


CASE = Case(
    id="loss-ignores-input",
    title="A feature the model never sees",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss stops at a floor; the gradient of the loss with respect to one input column is exactly 0.",
    # The backward of a slice writes zeros into the dropped columns: autograd's definition of
    # indexing, the same on every release.
    affects=(Affects("*", reason="a slice's backward writes zeros into what it dropped; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Andrej Karpathy: A Recipe for Training Neural Networks (2019), 'use backprop to chart dependencies'",
            url="https://karpathy.github.io/2019/04/25/recipe/",
        ),
        Source(
            title="torchtest2: the input_dependency check (wrong slicing, a variable reused by mistake)",
            url="https://pypi.org/project/torchtest2/",
        ),
    ),
    tags=("training", "autograd", "slicing", "sanity_check"),
    references=("https://docs.pytorch.org/docs/stable/notes/autograd.html",),
)
