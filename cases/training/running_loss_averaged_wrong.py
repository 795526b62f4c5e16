# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # The mean of batch means is not the dataset mean
#
# Your validation loop adds up `loss.item()` for each batch and divides by `len(loader)`. The
# number it prints depends on the batch size: evaluate the same model on the same data with
# `batch_size=4` and then `batch_size=5`, and the "average loss" changes. The loss is a mean
# over each batch, and the last batch is smaller than the others, yet it gets a full batch's
# weight in the average.

# %%
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Ten validation samples in batches of four: two full batches and a last one of two. A
# regression model whose prediction for `x` is `x`, against targets `2x`, so the squared
# error of sample `x` is `x**2`, for `x = 1 ... 10`.

# %%
N, BATCH = 10, 4


def setup(device):
    x = torch.arange(1.0, N + 1).unsqueeze(1)
    loader = DataLoader(TensorDataset(x, 2 * x), batch_size=BATCH)  # 4 + 4 + 2
    model = nn.Linear(1, 1).to(device)
    with torch.no_grad():
        model.weight.fill_(1.0)
        model.bias.zero_()
    return model, loader


def broken(device):
    with seeded(0):  # building the model and iterating the loader draw from the global RNG
        model, loader = setup(device)
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                loss = F.mse_loss(model(x.to(device)), y.to(device))  # mean over this batch
                total += loss.item()
        return total / len(loader)  # the number of batches


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# With the default `reduction="mean"`, `loss` is the average over the samples of *one batch*.
# Averaging those batch averages weighs every batch equally, so each sample of the last,
# smaller batch counts twice as much as a sample of a full batch here. The batch means are
# 7.5 (samples 1-4), 43.5 (5-8) and 90.5 (9-10); their mean is 47.17, while the mean over the
# ten samples is 385 / 10 = 38.5. With equal batches the two agree, which is why the habit
# survives; `drop_last=True` in a validation loader hides the problem by skipping samples.
#
# ## The fix
# Accumulate sums, not means: add `loss.item() * x.size(0)` (or compute the loss with
# `reduction="sum"`) and divide by the number of samples, `len(loader.dataset)`. The same goes
# for accuracy: count correct predictions and divide by the number of samples.


# %%
def fixed(device):
    with seeded(0):
        model, loader = setup(device)
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                loss = F.mse_loss(model(x.to(device)), y.to(device))
                total += loss.item() * x.size(0)  # back to this batch's sum
        return total / len(loader.dataset)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# PyTorch's own examples weight by batch size: the transfer-learning tutorial accumulates
# `loss.item() * inputs.size(0)` and divides by the dataset size, and the word-language-model
# example multiplies each chunk's loss by its length before dividing by the data length.
# Data Science Stack Exchange question 60613 asks about this pattern and a running-mean
# update, and riccardomusmeci/mlx-image#25 fixes the same bug in an accuracy metric that took
# the mean of per-batch ratios, so that unequal batches got equal weight. It is arithmetic, not
# a torch behaviour: every release gives the same numbers.

# %% [markdown]
# ## How the harness checks it
# The symptom is the mean of the batch means, 47.17, which only a per-batch average weighted
# by batches gives. Dividing the sum of batch means by the number of samples (mixing the two
# recipes) is wrong in another way, 14.15, and the symptom refuses it. The fix is checked
# against the sum of squares 1 + 4 + ... + 100 = 385 over 10, written out by hand.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The reported loss is the mean of the three batch means (7.5, 43.5, 90.5), 47.1667,
    instead of the dataset mean 38.5."""
    if run.error is not None:
        return False
    squares = [float(k * k) for k in range(1, N + 1)]
    batches = [squares[i : i + BATCH] for i in range(0, N, BATCH)]
    mean_of_means = sum(sum(b) / len(b) for b in batches) / len(batches)
    return abs(run.value - mean_of_means) < 1e-4


def near_miss(device):
    with seeded(0):
        model, loader = setup(device)
        total = 0.0
        with torch.no_grad():
            for x, y in loader:
                total += F.mse_loss(model(x.to(device)), y.to(device)).item()
        return total / len(loader.dataset)  # means summed, divided by samples


def check(run, device):
    """The mean squared error over the ten samples: (1 + 4 + ... + 100) / 10 = 38.5."""
    expected = sum(k * k for k in range(1, N + 1)) / N
    assert abs(run.value - expected) < 1e-4, (run.value, expected)


CASE = Case(
    id="running-loss-averaged-wrong",
    title="The mean of batch means is not the dataset mean",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The epoch's average loss changes with the batch size: the small last batch weighs like a full one.",
    # Arithmetic in user code; the default reduction="mean" has not changed.
    affects=(Affects("*", reason="averaging per-batch means; the same numbers in every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Data Science Stack Exchange 60613: Explanation behind the calculation of training "
            "loss in deep learning model",
            url="https://datascience.stackexchange.com/questions/60613/explanation-behind-the-calculation-of-training-loss-in-deep-learning-model",
        ),
        Source(
            title="riccardomusmeci/mlx-image#25: Fix accuracy metrics (per-batch ratios averaged with equal weight)",
            url="https://github.com/riccardomusmeci/mlx-image/pull/25",
        ),
        Source(
            title="PyTorch tutorial: Transfer Learning for Computer Vision (loss weighted by batch size)",
            url="https://pytorch.org/tutorials/beginner/transfer_learning_tutorial.html",
        ),
    ),
    tags=("metrics", "evaluation", "logging", "dataloader"),
    references=(
        "https://github.com/pytorch/examples/blob/main/word_language_model/main.py",
        "https://pytorch.org/docs/stable/generated/torch.nn.MSELoss.html",
    ),
)
