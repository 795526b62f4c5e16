# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Validation leaves the model in eval mode
#
# The training loop calls `model.train()` once, at the top, and validates at the end of every
# epoch with a helper that calls `model.eval()`. The run looks healthy: the loss keeps falling,
# gradients flow, the optimizer steps. But from the second epoch on, Dropout no longer drops
# anything, and BatchNorm normalises with frozen running statistics that it no longer updates.
# Nothing in the loop ever switches the model back to training mode, so only the first epoch
# trained the model as it was designed.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A BatchNorm on the raw features, then a small MLP with Dropout. Three epochs of four batches,
# a validation pass after each epoch. The function records, at every training step, whether the
# model was in training mode, and what the BatchNorm layer accumulated.

# %%
EPOCHS = 3
BATCHES = 4
BATCH = 16
OFFSET = [3.0, -2.0, 0.5, 10.0]  # raw features, far from zero mean


def data(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(BATCHES * BATCH, 4, generator=g) * 2 + torch.tensor(OFFSET)
    y = x @ torch.tensor([[1.0], [-1.0], [0.5], [0.2]])
    val_x = torch.randn(BATCH, 4, generator=g) * 2 + torch.tensor(OFFSET)
    val_y = val_x @ torch.tensor([[1.0], [-1.0], [0.5], [0.2]])
    return x.to(device), y.to(device), val_x.to(device), val_y.to(device)


def model_for(device):
    with seeded(0):
        return nn.Sequential(nn.BatchNorm1d(4), nn.Linear(4, 8), nn.ReLU(), nn.Dropout(0.2), nn.Linear(8, 1)).to(device)


def validate(model, val_x, val_y):
    model.eval()
    with torch.no_grad():
        return F.mse_loss(model(val_x), val_y).item()


def fit(device, start_epoch):
    x, y, val_x, val_y = data(device)
    model = model_for(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    modes = []
    model.train()
    with seeded(1):  # the dropout masks
        for epoch in range(EPOCHS):
            start_epoch(model)
            for b in range(BATCHES):
                xb, yb = x[b * BATCH : (b + 1) * BATCH], y[b * BATCH : (b + 1) * BATCH]
                modes.append(model.training)
                opt.zero_grad()
                F.mse_loss(model(xb), yb).backward()
                opt.step()
            validate(model, val_x, val_y)
    bn = model[0]
    return {
        "training_at_each_step": modes,
        "num_batches_tracked": bn.num_batches_tracked.item(),
        "running_mean": bn.running_mean.clone(),
        "running_var": bn.running_var.clone(),
    }


def broken(device):
    return fit(device, start_epoch=lambda model: None)  # model.train() only once, before the loop


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `model.eval()` and `model.train()` set one flag, `training`, on the module and all its
# children, and it stays set until the next call. Nothing in an optimizer step, a `backward()`
# or a new epoch resets it. After the first validation, every training batch runs in eval mode:
# Dropout is the identity, so the regularisation is gone and the training loss no longer
# measures what it measured in epoch 1; BatchNorm normalises with its running mean and variance
# instead of the batch's, and no longer updates them: they stay as they were after epoch 1
# (`num_batches_tracked` stops at 4). Gradients and optimizer steps are unaffected, which is why
# the run looks healthy. The opposite mistake, never calling `eval()`, is `train-eval-mode`.
#
# ## The fix
# Put `model.train()` at the start of every epoch (or at the start of the training step), next
# to the code that depends on it, and `model.eval()` inside the evaluation helper. Better still,
# make the helper restore the mode it found (`was_training = model.training` ...
# `model.train(was_training)`). The check recomputes BatchNorm's running statistics by hand, as
# the exponential moving average (momentum 0.1) of all twelve batches' means and unbiased
# variances.


# %%
def fixed(device):
    return fit(device, start_epoch=lambda model: model.train())


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Project after project shipped this loop and fixed it once a reader noticed.
# wkentaro/pytorch-fcn#57 reports that the training loss jumps when a new epoch starts, because
# validation, which can run in the middle of an epoch, leaves the model in eval mode (PR #56,
# "Return to train mode after validation", proposed the one-line fix the maintainer then
# applied). In ermongroup/ncsn#2 the model is put in `eval()` to log a validation loss and never
# returned to `train()`; in asyml/texar-pytorch#310 the BERT example's evaluation leaves the
# mode switched (fixed in PR #311); and optuna/optuna#1725 moves the `model.train()` of the
# PyTorch example inside the epoch loop for the same reason. The `nn.Module.train` and `eval`
# documentation describes the flag. No release changes it.

# %% [markdown]
# ## How the harness checks it
# BatchNorm statistics that stop updating are not always this bug. Fine-tuning with small
# batches often freezes them on purpose: `model.train()` every epoch, then `eval()` on the
# BatchNorm layers alone. The model itself trains in training mode, and only the BatchNorm
# layers hold still. The symptom asks for training steps taken with the whole model in eval
# mode, and does not claim a deliberate freeze.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The first epoch's steps ran in training mode and every later one in eval mode, and
    BatchNorm counted only the first epoch's batches."""
    if run.error is not None:
        return False
    modes = run.value["training_at_each_step"]
    return (
        all(modes[:BATCHES])
        and not any(modes[BATCHES:])
        and len(modes) == EPOCHS * BATCHES
        and run.value["num_batches_tracked"] == BATCHES
    )


def near_miss(device):
    """A deliberate BatchNorm freeze: model.train() every epoch, then eval() on the BatchNorm."""

    def train_but_freeze_bn(model):
        model.train()
        model[0].eval()

    return fit(device, start_epoch=train_but_freeze_bn)


def check(run, device):
    """Every step ran in training mode, BatchNorm counted all 12 batches, and its running mean
    and variance equal the moving averages (momentum 0.1, from mean 0 and variance 1) of the
    12 batches' means and unbiased variances, worked out by hand."""
    assert run.error is None, f"raised {run.error!r}"
    assert all(run.value["training_at_each_step"]), run.value["training_at_each_step"]
    assert run.value["num_batches_tracked"] == EPOCHS * BATCHES, run.value["num_batches_tracked"]
    x = data(device)[0]
    mean, var = torch.zeros(4, device=device), torch.ones(4, device=device)
    for _ in range(EPOCHS):
        for b in range(BATCHES):
            xb = x[b * BATCH : (b + 1) * BATCH]
            mean = 0.9 * mean + 0.1 * xb.mean(dim=0)
            var = 0.9 * var + 0.1 * xb.var(dim=0, unbiased=True)
    torch.testing.assert_close(run.value["running_mean"], mean, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(run.value["running_var"], var, rtol=1e-5, atol=1e-5)


CASE = Case(
    id="forgot-train-after-eval",
    title="Validation leaves the model in eval mode",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="After the first validation every training step runs in eval mode: Dropout off, BatchNorm frozen.",
    # The training flag persists until the next train()/eval() call; Dropout and BatchNorm
    # have read it since the first releases. No release changes it.
    affects=(Affects("*", reason="the training flag persists until the next train()/eval(); no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="wkentaro/pytorch-fcn#57: A little bug in trainer.py (the model is not put back in training mode after validation)",
            url="https://github.com/wkentaro/pytorch-fcn/issues/57",
        ),
        Source(
            title="ermongroup/ncsn#2: Model in eval forever after the first log on validation",
            url="https://github.com/ermongroup/ncsn/issues/2",
        ),
        Source(
            title="asyml/texar-pytorch#310: Switch between model.train() and model.eval()",
            url="https://github.com/asyml/texar-pytorch/issues/310",
        ),
    ),
    tags=("training", "eval", "dropout", "batchnorm", "training_loop"),
    references=(
        "https://github.com/wkentaro/pytorch-fcn/pull/56",
        "https://github.com/asyml/texar-pytorch/pull/311",
        "https://github.com/optuna/optuna/pull/1725",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.train",
    ),
)
