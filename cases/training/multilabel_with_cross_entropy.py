# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Multi-label targets trained with `CrossEntropyLoss`
#
# Each image can carry several tags at once (a photo is both "beach" and "sunset"), so the
# targets are multi-hot rows such as `[1, 1, 0]`. `nn.CrossEntropyLoss` accepts them without a
# word, the loss goes down, and the single-tag samples come out right. The samples with two
# tags never do: after training, each of their two tags sits just under 50%, a threshold of
# 0.5 predicts neither, and no amount of training moves them higher.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Three samples, three tags. Sample 0 has tags 0 and 1, sample 1 has only tag 2, sample 2 has
# tags 0 and 2. The inputs are one-hot, so a linear layer can fit every sample on its own.
# The model is trained with `CrossEntropyLoss` on the multi-hot rows, and read out the way
# that loss implies: softmax, then a 0.5 threshold per tag.

# %%
TARGETS = [[1.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 1.0]]
STEPS = 200


def train(device, loss_fn, to_probs):
    inputs = torch.eye(3, device=device)
    targets = torch.tensor(TARGETS, device=device)
    with seeded(0):
        model = nn.Linear(3, 3).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    for _ in range(STEPS):
        opt.zero_grad()
        loss_fn(model(inputs), targets).backward()
        opt.step()
    with torch.no_grad():
        probs = to_probs(model(inputs))
    return {"probs": probs, "predicted": (probs > 0.5).float()}


def broken(device):
    return train(device, nn.CrossEntropyLoss(), lambda logits: torch.softmax(logits, dim=1))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `CrossEntropyLoss` is a softmax followed by a log-likelihood: it models *one* class per
# sample, and since PyTorch 1.10 it also takes a row of class probabilities as the target.
# A multi-hot row is taken as such a row (it is not even checked to sum to 1), so for
# `[1, 1, 0]` the loss is `-log p0 - log p1` with `p0 + p1 + p2 = 1`. Its best possible
# value is at `p0 = p1 = 0.5`: the two tags are made to share one unit of probability
# instead of each being predicted as present. With two tags, each stays at 0.5 or below; with
# three tags, the best is a third each. No threshold separates "present" from
# "absent" reliably, and the tags the model should be surest about are the ones it splits.
#
# ## The fix
# Tags that are not mutually exclusive are independent yes/no questions: one sigmoid per
# tag, and `nn.BCEWithLogitsLoss` (binary cross entropy on the raw scores) as the loss. Each
# tag's probability is then free to go to 1 on its own, and `sigmoid(logits) > 0.5` gives
# back the tag set. The check compares the predicted tags with the targets written out above.


# %%
def fixed(device):
    return train(device, nn.BCEWithLogitsLoss(), torch.sigmoid)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The distinction between multi-class (exactly one class per sample) and multi-label (any
# number of labels) is spelled out on the PyTorch forum in "Using `BCEWithLogisLoss` for
# multi-label classification": `CrossEntropyLoss` cannot do the second, `BCEWithLogitsLoss`
# can, because multi-label classification is a set of binary decisions. The
# `BCEWithLogitsLoss` documentation gives the multi-label form of the loss (one term per
# class, with an optional `pos_weight` per class); the `CrossEntropyLoss` documentation
# describes its probability targets, accepted since 1.10, which is why a multi-hot float
# target runs at all instead of failing on its dtype. Nothing here depends on a release: the
# matrix observes it from 1.13.1 on, and the softmax's constraint is arithmetic.

# %% [markdown]
# ## How the harness checks it
# The symptom asks two things of the result: a sample with two or more target tags is
# predicted with fewer than two, and the probabilities of each row sum to 1 (a softmax
# read-out). A multi-label model that is merely undertrained, trained the right way with
# `BCEWithLogitsLoss` for a single small step, also misses tags, but its independent sigmoid
# probabilities do not sum to 1 per row: the symptom must refuse it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """A multi-tag sample is predicted with fewer tags than it has, and every row of
    probabilities sums to 1: the tags share one softmax."""
    if run.error is not None:
        return False
    probs, predicted = run.value["probs"].cpu(), run.value["predicted"].cpu()
    targets = torch.tensor(TARGETS)
    multi = targets.sum(dim=1) >= 2
    missed = bool((predicted[multi].sum(dim=1) < targets[multi].sum(dim=1)).any())
    one_softmax = torch.allclose(probs.sum(dim=1), torch.ones(len(TARGETS)), atol=1e-5)
    return missed and one_softmax


def near_miss(device):
    """The right loss, stopped after one tiny step: tags are missed, but by sigmoids."""
    inputs = torch.eye(3, device=device)
    targets = torch.tensor(TARGETS, device=device)
    with seeded(0):
        model = nn.Linear(3, 3).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    opt.zero_grad()
    nn.BCEWithLogitsLoss()(model(inputs), targets).backward()
    opt.step()
    with torch.no_grad():
        probs = torch.sigmoid(model(inputs))
    return {"probs": probs, "predicted": (probs > 0.5).float()}


def check(run, device):
    """The predicted tag sets are exactly the targets written out by hand."""
    assert run.error is None, f"raised {run.error!r}"
    torch.testing.assert_close(run.value["predicted"], torch.tensor(TARGETS, device=device))


def stable(value):
    """Two hundred SGD steps: the tag sets, and the probabilities to 2 decimals."""
    return {
        "predicted": value["predicted"].cpu().tolist(),
        "probs": [[round(p, 2) for p in row] for row in value["probs"].cpu().tolist()],
    }


CASE = Case(
    id="multilabel-with-cross-entropy",
    title="Multi-label targets trained with CrossEntropyLoss",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Samples with two labels are predicted with neither: their two probabilities share one softmax and stay at 0.5.",
    # The softmax inside CrossEntropyLoss makes the classes compete: arithmetic, not an API
    # behaviour. Multi-hot float targets are accepted as class probabilities since 1.10
    # (before, a float target was refused), so every release of the matrix (1.13.1 on)
    # runs the broken code; no release is known to change it.
    affects=(Affects("*", reason="a softmax over tags that are not exclusive; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch Forums: Using BCEWithLogisLoss for multi-label classification",
            url="https://discuss.pytorch.org/t/using-bcewithlogisloss-for-multi-label-classification/67011",
        ),
        Source(
            title="PyTorch documentation: torch.nn.BCEWithLogitsLoss (the multi-label form of the loss)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html",
        ),
    ),
    tags=("loss", "cross_entropy", "multilabel", "sigmoid"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html",
    ),
)
