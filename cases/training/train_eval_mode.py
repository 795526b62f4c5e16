# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Forgetting `model.eval()`
#
# A trained model predicts the same image twice, in two different test batches, and gets two
# different answers; test accuracy depends on the batch size and on which images happen to
# share a batch, and a batch of one may even fail. The model is still in training mode:
# BatchNorm normalises with the statistics of the batch in front of it, and Dropout drops.

# %%
import torch
import torch.nn as nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A linear layer, BatchNorm and Dropout, freshly built (its running statistics are the
# initial mean 0 and variance 1). The same sample is predicted as the first row of two test
# batches whose other rows differ.


# %%
def model_and_batches(device):
    with seeded(0):
        model = nn.Sequential(nn.Linear(4, 3), nn.BatchNorm1d(3), nn.Dropout(0.5))
        batch_a = torch.randn(8, 4)
        batch_b = torch.randn(8, 4)
    batch_b[0] = batch_a[0]  # the same sample in both batches
    return model.to(device), batch_a.to(device), batch_b.to(device)


def broken(device):
    model, batch_a, batch_b = model_and_batches(device)
    with torch.no_grad(), seeded(1):
        first = model(batch_a)[0]  # model.eval() was never called
        second = model(batch_b)[0]
    return {"training": model.training, "predictions": torch.stack([first, second])}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `nn.Module` has one flag, `training`, set by `model.train()` and `model.eval()` on the
# module and all its children; a new module starts with `training=True`. In training mode
# BatchNorm subtracts the current batch's mean and divides by its standard deviation (and
# updates its running averages, see `batchnorm-updates-in-forward`), so a sample's output is
# a function of the other samples in its batch; Dropout zeroes a random half of the features
# and doubles the rest. In eval mode BatchNorm uses the running averages it accumulated during
# training, a fixed affine map per feature, and Dropout passes its input through unchanged.
# `torch.no_grad()` does not change the mode: it controls autograd, nothing else.
#
# ## The fix
# Call `model.eval()` before predicting and `model.train()` before the next epoch. Each
# sample then gets one prediction, whatever its batch. For this fresh model it is checked by
# hand: running mean 0, running variance 1, scale 1 and shift 0 make BatchNorm a division by
# `sqrt(1 + eps)`, and Dropout the identity.


# %%
def fixed(device):
    model, batch_a, batch_b = model_and_batches(device)
    model.eval()
    with torch.no_grad():
        first = model(batch_a)[0]
        second = model(batch_b)[0]
    return {"training": model.training, "predictions": torch.stack([first, second])}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Both source posts make this point. The Zhihu post says that models with BatchNorm or Dropout
# must be told the phase explicitly with `model.train()` and `model.eval()`, because those layers
# behave differently in training and in testing. The debugging notes explain BatchNorm in detail:
# in `train()` the running mean and variance are recorded but each mini-batch is normalised with
# its own statistics; in `eval()` the recorded averages are used and no longer updated. The
# BatchNorm documentation states the same split (batch statistics in training, running estimates
# in evaluation), and a forum answer linked above explains that `eval()` recurses into every
# submodule, disabling Dropout and switching BatchNorm to its running estimates.

# %% [markdown]
# ## How the harness checks it
#
# Two predictions for one sample can have another cause. A model correctly in eval mode, fed
# by a data pipeline that normalises each *batch* with its own mean and standard deviation,
# also answers differently for the same raw sample in two batches; the bug is in the
# preprocessing, and the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1, S2


def symptom(run):
    """The same sample gets two different predictions from a model still in training mode."""
    if run.error is not None:
        return False
    first, second = run.value["predictions"]
    return run.value["training"] and not torch.allclose(first, second)


def stable(value):
    """The dropout mask comes from a random stream that differs between torch releases and CPU
    kernels, so the broken values are not kept: the mode, the shape and whether the two
    predictions agree are."""
    first, second = value["predictions"]
    return {
        "training": value["training"],
        "shape": list(value["predictions"].shape),
        "same_prediction": bool(torch.allclose(first, second)),
    }


def near_miss(device):
    model, batch_a, batch_b = model_and_batches(device)
    model.eval()
    per_batch = lambda b: (b - b.mean(0)) / b.std(0)  # noqa: E731 - the preprocessing bug
    with torch.no_grad():
        first = model(per_batch(batch_a))[0]
        second = model(per_batch(batch_b))[0]
    return {"training": model.training, "predictions": torch.stack([first, second])}


def check(run, device):
    """Both predictions equal the sample's eval-mode output written out by hand from the fresh
    model's weights: (x·Wᵀ + b) / sqrt(1 + eps), Dropout the identity."""
    model, batch_a, _ = model_and_batches(device)
    linear, bn = model[0], model[1]
    with torch.no_grad():
        by_hand = (batch_a[0] @ linear.weight.T + linear.bias) / (1 + bn.eps) ** 0.5
    assert run.value["training"] is False, "the model is still in training mode"
    torch.testing.assert_close(run.value["predictions"], torch.stack([by_hand, by_hand]))


CASE = Case(
    id="train-eval-mode",
    title="Forgetting model.eval()",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The same image gets different predictions in different test batches: the model is in training mode.",
    # A module starts in training mode and stays there until eval() is called; BatchNorm and
    # Dropout have read that flag since the first releases. Observed on 2.13.0.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S2.at("section '显式指定model.train()和model.eval()' (set train() and eval() explicitly)"),
        S1.at(
            "section 'BatchNorm的正确用法' (using BatchNorm correctly): batch statistics in train(), running averages in eval()"
        ),
    ),
    tags=("nn_module", "eval", "batchnorm", "dropout"),
    references=(
        "https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html",
        "https://discuss.pytorch.org/t/what-is-the-meaning-of-the-training-attribute-model-train-and-model-eval/40259/2",
    ),
)
