# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # BatchNorm in training mode on a batch of one
#
# The first epoch runs batch after batch and then, at its very end, fails with
# `ValueError: Expected more than 1 value per channel when training, got input size
# torch.Size([1, 8])`. The dataset has 9 samples and the batch size is 4: the last batch holds
# a single sample, and a `BatchNorm1d` in training mode cannot normalise one value per
# channel. Change the dataset size by one and the error disappears, which makes it look random.

# %%
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# 9 samples of 4 features, batches of 4, a small network with a `BatchNorm1d` after its first
# layer, one epoch of training. The `DataLoader` keeps its default `drop_last=False`.

# %%
SAMPLES, BATCH = 9, 4


def train_one_epoch(device, drop_last):
    with seeded(0):
        x, y = torch.randn(SAMPLES, 4), torch.randint(0, 2, (SAMPLES,))
        model = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Linear(8, 2)).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.1)
        loader = DataLoader(TensorDataset(x, y), batch_size=BATCH, drop_last=drop_last)
        sizes = []
        for xb, yb in loader:
            xb, yb = xb.to(device), yb.to(device)
            opt.zero_grad()
            F.cross_entropy(model(xb), yb).backward()  # the BatchNorm runs in training mode
            opt.step()
            sizes.append(len(xb))
    return {"batch_sizes": sizes, "num_batches_tracked": int(model[1].num_batches_tracked)}


def broken(device):
    return train_one_epoch(device, drop_last=False)  # 4 + 4 + 1


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# In training mode, batch normalisation standardises each channel with the mean and variance
# of the current batch. With one value per channel there is no variance to speak of: the
# normalised value would be `0 / sqrt(0 + eps)` for every input, so the layer's output would
# no longer depend on the input and nothing could be learned from that batch, and the running
# variance would be updated with a meaningless number. Since 0.3, `F.batch_norm` refuses it
# up front, before any kernel runs, with this `ValueError`. The count that matters is the
# number of values per channel, `batch × (spatial size)`: `BatchNorm2d` on a batch of one
# 8 × 8 image has 64 values per channel and runs (though its statistics then come from one
# image), while `BatchNorm1d` on `(1, C)` has one. In evaluation mode the layer uses its
# running statistics and accepts a batch of one.
#
# ## The fix
# For training, drop the incomplete last batch: `DataLoader(..., drop_last=True)` (with
# shuffling, a different remainder is left out each epoch, so no sample is lost for good).
# For inference on a single sample, call `model.eval()` first. Alternatively, choose a batch
# size that leaves no remainder of one, or a normalisation that does not depend on the batch
# (`LayerNorm`, `GroupNorm`). The check counts the batches by hand: `9 // 4 = 2` batches of 4.


# %%
def fixed(device):
    return train_one_epoch(device, drop_last=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The check was added to `F.batch_norm` in PyTorch 0.3; pytorch/pytorch#4534 ("nn.BatchNorm1d
# fails with batch size 1 on the new PyTorch 0.3") reports code that ran on 0.2 and failed on
# 0.3 when a last batch had one sample, and the maintainers answered that feature-wise batch
# normalisation needs more than one element per feature. pytorch/pytorch#7716 shows the same
# failure from a plain training loop whose dataset size leaves a remainder of one, and
# fastai/fastai#1352 is the same error at the end of an epoch, fixed by `drop_last=True`
# (fastai's default since). The `DataLoader` documentation describes `drop_last`. The message
# is the same on every release the matrix runs (1.13.1 on).

# %% [markdown]
# ## How the harness checks it
# `BatchNorm1d` raises other `ValueError`s too: given a 4-D tensor it says "expected 2D or 3D
# input (got 4D input)". That is a wrong layer for the data, not a batch of one, and the symptom
# must refuse it: it matches the words "more than 1 value per channel".

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """A ValueError saying a channel needs more than one value in training mode."""
    return run.raised(ValueError, r"more than 1 value per channel")


def near_miss(device):
    """A BatchNorm1d given a 4-D batch: another ValueError from the same layer."""
    norm = nn.BatchNorm1d(3).to(device)
    return norm(torch.zeros(2, 3, 4, 4, device=device))


def check(run, device):
    """Two batches of 4 (9 // 4, written by hand), and the BatchNorm updated its statistics
    exactly twice."""
    assert run.error is None, f"raised {run.error!r}"
    assert run.value["batch_sizes"] == [BATCH] * (SAMPLES // BATCH)
    assert run.value["num_batches_tracked"] == SAMPLES // BATCH


CASE = Case(
    id="batchnorm-batch-of-one",
    title="BatchNorm in training mode on a batch of one",
    kind="error",
    symptom_category="error",
    symptom_line="ValueError: Expected more than 1 value per channel when training, at the last batch of an epoch.",
    # F.batch_norm has refused one value per channel in training mode since 0.3
    # (pytorch/pytorch#4534 reports the change from 0.2); the matrix observes the same message
    # on every release from 1.13.1 on.
    affects=(Affects(">=0.3", since="pytorch/pytorch#4534: code that ran on 0.2 raised this ValueError on 0.3.0"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#4534: nn.BatchNorm1d fails with batch size 1 on the new PyTorch 0.3",
            url="https://github.com/pytorch/pytorch/issues/4534",
        ),
        Source(
            title="pytorch/pytorch#7716: Batchnorm1d cannot work with batch size == 1",
            url="https://github.com/pytorch/pytorch/issues/7716",
        ),
        Source(
            title='fastai/fastai#1352: "Expected more than 1 value per channel when training" (use drop_last=True)',
            url="https://github.com/fastai/fastai/issues/1352",
        ),
    ),
    tags=("batchnorm", "dataloader", "drop_last", "training_loop"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.BatchNorm1d.html",
        "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",
    ),
)
