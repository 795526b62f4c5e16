# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Training on a label-sorted dataset without shuffling
#
# The dataset was built class by class (all the cats, then all the dogs, then all the birds),
# and the training `DataLoader` keeps the default `shuffle=False`. The loss curve looks
# healthy: every batch is quickly fit. But each batch holds a single class, and the model
# ends each epoch having seen only the last class for many steps in a row. On a balanced
# evaluation set it predicts that class for everything: accuracy at chance.

# %%
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Three classes of 2-D points, 64 per class, stored in class order. A linear classifier,
# SGD with learning rate 0.5, batches of 8, two epochs. The evaluation set is drawn the same
# way (32 points per class). The function returns how many evaluation points are predicted as
# each class, the accuracy, and the share of training batches that held a single class.

# %%
CENTERS = [[0.3, 0.0], [-0.15, 0.26], [-0.15, -0.26]]  # three directions, 120° apart
CLASSES, PER_CLASS, BATCH, EPOCHS = 3, 64, 8, 2


def points(per_class, seed, counts=None):
    g = torch.Generator().manual_seed(seed)
    counts = counts or [per_class] * CLASSES
    centers = torch.tensor(CENTERS)
    x = torch.cat([centers[c] + 0.09 * torch.randn(n, 2, generator=g) for c, n in enumerate(counts)])
    y = torch.cat([torch.full((n,), c) for c, n in enumerate(counts)])  # sorted by label
    return x, y


def train_and_evaluate(device, shuffle, counts=None):
    x, y = points(PER_CLASS, seed=0, counts=counts)
    loader = DataLoader(
        TensorDataset(x, y), batch_size=BATCH, shuffle=shuffle, generator=torch.Generator().manual_seed(0)
    )
    with seeded(0):
        model = nn.Linear(2, CLASSES).to(device)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        single_class, last_label = [], None
        for _ in range(EPOCHS):
            for xb, yb in loader:
                xb, yb = xb.to(device), yb.to(device)
                single_class.append(bool((yb == yb[0]).all()))
                last_label = int(yb[-1])
                opt.zero_grad()
                F.cross_entropy(model(xb), yb).backward()
                opt.step()
    x_eval, y_eval = points(32, seed=1)
    with torch.no_grad():
        predicted = model(x_eval.to(device)).argmax(dim=1).cpu()
    return {
        "predicted_per_class": torch.bincount(predicted, minlength=CLASSES).tolist(),
        "accuracy": (predicted == y_eval).float().mean().item(),
        "single_class_batches": sum(single_class) / len(single_class),
        "last_label_trained": last_label,
    }


def broken(device):
    return train_and_evaluate(device, shuffle=False)  # the DataLoader default


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Stochastic gradient descent assumes each batch is a small, unbiased sample of the whole
# training set, so that on average a step points towards a better model for *all* classes.
# A batch of one class only says "predict this class more": the quickest way to lower its
# loss is to raise that class's bias, and 8 steps in a row of class 2 do just that, undoing
# what the earlier batches taught. The loss of each batch looks fine, because each batch is
# easy on its own. The order is also the same every epoch, so the last class wins every time.
# `DataLoader` does not shuffle unless asked (`shuffle=False` is its default, right for
# evaluation), and a dataset read from class folders or from a file sorted by label arrives
# in exactly this order.
#
# ## The fix
# `DataLoader(..., shuffle=True)` for the training set (here with its own seeded
# `torch.Generator`, so runs are reproducible): a new permutation each epoch, batches that
# mix the classes. Keep `shuffle=False` for evaluation. The check asks for the accuracy on
# the balanced evaluation set to be at least 90%, far above the 1/3 of chance, with every
# class predicted for its own points.


# %%
def fixed(device):
    return train_and_evaluate(device, shuffle=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `torch.utils.data` documentation describes `shuffle` ("set to True to have the data
# reshuffled at every epoch", default False). The Daily Dose of Data Science post "Why Is It
# Important To Shuffle Your Dataset Before Training An ML Model" trains the same network on
# label-ordered and on shuffled data and shows the ordered one failing to converge; the
# Data Science Stack Exchange question "What does the 'randomly shuffle training samples' in
# stochastic gradient descent attain?" explains it the same way: batches of related examples
# pull the model back and forth between class-specific minima. No release of PyTorch changed
# the default; the matrix observes the collapse from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A model that predicts one class for everything is not always this pitfall: with shuffled
# batches but a training set that is almost all class 0, a model can also collapse onto the
# majority class. The symptom asks for the order to be the cause: every training batch held a
# single class, and the class predicted for the whole balanced evaluation set is the last one
# trained on.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Every training batch held one class, and the whole balanced evaluation set is predicted
    as the last class trained on: accuracy at chance."""
    if run.error is not None:
        return False
    v = run.value
    everything_last = v["predicted_per_class"][v["last_label_trained"]] == sum(v["predicted_per_class"])
    return v["single_class_batches"] == 1.0 and everything_last and abs(v["accuracy"] - 1 / CLASSES) < 1e-6


def near_miss(device):
    """Shuffled batches, but 176 points of class 0 for 8 of each other class."""
    return train_and_evaluate(device, shuffle=True, counts=[176, 8, 8])


def check(run, device):
    """At least 90% of the balanced evaluation set is right, so each class (32 points written
    out above) is predicted for most of its own points."""
    assert run.error is None, f"raised {run.error!r}"
    assert run.value["accuracy"] >= 0.9, f"accuracy {run.value['accuracy']:.3f}, chance is {1 / CLASSES:.3f}"
    assert all(n >= 0.9 * 32 for n in run.value["predicted_per_class"]), run.value["predicted_per_class"]


def stable(value):
    """Four dozen SGD steps: the counts, the share of single-class batches and the accuracy to
    2 decimals."""
    return {
        **value,
        "accuracy": round(value["accuracy"], 2),
        "single_class_batches": round(value["single_class_batches"], 2),
    }


CASE = Case(
    id="training-data-not-shuffled",
    title="Training on a label-sorted dataset without shuffling",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Trained on label-sorted batches, the model predicts the last class for everything: accuracy at chance.",
    # DataLoader has defaulted to shuffle=False since it was written; the collapse is a
    # property of SGD on one-class batches. No release changes either.
    affects=(Affects("*", reason="shuffle defaults to False; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.utils.data.DataLoader (shuffle, default False)",
            url="https://docs.pytorch.org/docs/stable/data.html",
        ),
        Source(
            title="Daily Dose of Data Science: Why Is It Important To Shuffle Your Dataset Before Training An ML Model",
            url="https://blog.dailydoseofds.com/p/why-is-it-important-to-shuffle-your",
        ),
        Source(
            title='Data Science Stack Exchange: What does the "randomly shuffle training samples" '
            "in stochastic gradient descent attain?",
            url="https://datascience.stackexchange.com/questions/42326/what-does-the-randomly-shuffle-training-samples-in-stochastic-gradient-descent",
        ),
    ),
    tags=("data", "dataloader", "shuffle", "sgd"),
    references=("https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.DataLoader",),
)
