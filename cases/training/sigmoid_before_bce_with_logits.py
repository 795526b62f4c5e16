# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A sigmoid before `BCEWithLogitsLoss`
#
# A binary classifier ends in `nn.Sigmoid()`, because its output should be a probability,
# and the output goes into `nn.BCEWithLogitsLoss`. Training runs, the predicted probabilities
# even look confident and right, yet the loss refuses to go below about 0.5 and barely moves
# from one epoch to the next. The loss applies a sigmoid of its own: the model's outputs are
# squashed twice.

# %%
import math

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Two samples, one positive and one negative, that a single linear unit separates perfectly.
# The model's "output layer" is a sigmoid; its output is what the loss receives. 100 steps of
# SGD; the function returns the per-sample losses and the probabilities the model reports.

# %%
INPUTS = [[1.0], [-1.0]]
LABELS = [[1.0], [0.0]]
STEPS = 100


def train(device, sigmoid_in_model):
    x = torch.tensor(INPUTS, device=device)
    y = torch.tensor(LABELS, device=device)
    with seeded(0):
        linear = nn.Linear(1, 1).to(device)
    model = nn.Sequential(linear, nn.Sigmoid()) if sigmoid_in_model else linear
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    for _ in range(STEPS):
        opt.zero_grad()
        nn.BCEWithLogitsLoss()(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        out = model(x)
        losses = F.binary_cross_entropy_with_logits(out, y, reduction="none")
        probs = out if sigmoid_in_model else torch.sigmoid(out)
    return {"losses": losses.flatten(), "probs": probs.flatten()}


def broken(device):
    return train(device, sigmoid_in_model=True)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `BCEWithLogitsLoss` is `sigmoid` followed by binary cross entropy, fused for numerical
# stability: it expects raw scores (logits) anywhere on the real line. Given probabilities
# `p` in `[0, 1]`, it computes the sigmoid again, and `sigmoid(p)` can only lie between
# `sigmoid(0) = 0.5` and `sigmoid(1) ≈ 0.731`. So a positive sample's loss can never drop
# below `-log(0.731) ≈ 0.313`, and a negative sample's never below `-log(1 - 0.5) = log 2 ≈
# 0.693`, however right the model is: here the model says 0.96 and 0.02, and the losses stay
# at about 0.32 and 0.70. The gradient is also multiplied by the first sigmoid's slope
# `p (1 - p)`, which vanishes as the model grows confident, so the steps shrink while the
# loss stays high; a learning-rate schedule or early stopping that watches the loss is misled.
#
# ## The fix
# Remove the sigmoid from the model (or keep it and use `nn.BCELoss`, which is less stable
# numerically). Train on logits and apply `torch.sigmoid` only where a probability is needed.
# The check recomputes each sample's loss by hand from the reported probability,
# `-log p` for a positive and `-log(1 - p)` for a negative, and asks the mean to be below the
# floor the double sigmoid imposes.


# %%
def fixed(device):
    return train(device, sigmoid_in_model=False)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `BCEWithLogitsLoss` documentation says the loss combines a sigmoid layer and
# `BCELoss` in one class. Repositories keep meeting the double sigmoid: a question on
# lopuhin/kaggle-imet-2019#3 ("Sigmoid before BCEWithLogitsLoss") is answered that the loss
# expects logits, so no sigmoid may be added; NVIDIA-Merlin/models#1175 changed a default loss
# because `BCEWithLogitsLoss` after a sigmoid output applied it twice; yudi-mars/daisyRec#15
# removed the sigmoid because otherwise the loss did not converge; itakurah/focal-loss-pytorch#5
# points out that the second sigmoid only sees `[0.5, 0.73]`. No release changed the loss's
# definition; the matrix observes the floor from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A loss stuck around 0.5 alone is not this pitfall: a model trained correctly on labels it
# cannot separate (the same input labelled 1 once and 0 once) also ends with a loss near
# `log 2`. But it is not confident: its probabilities stay near 0.5. The symptom requires a
# confident, correct model (above 0.9 for the positive, below 0.1 for the negative) whose
# per-sample losses still sit above the double-sigmoid floors.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source

POSITIVE_FLOOR = -math.log(torch.sigmoid(torch.tensor(1.0)).item())  # ≈ 0.313
NEGATIVE_FLOOR = math.log(2.0)  # ≈ 0.693


def symptom(run):
    """The model is confident and right, yet the positive's loss is at or above -log σ(1) and
    the negative's at or above log 2: the losses of a sigmoid applied twice."""
    if run.error is not None:
        return False
    losses, probs = run.value["losses"].cpu(), run.value["probs"].cpu()
    confident = probs[0] > 0.9 and probs[1] < 0.1
    floored = losses[0] >= POSITIVE_FLOOR - 1e-6 and losses[1] >= NEGATIVE_FLOOR - 1e-6
    return bool(confident and floored)


def near_miss(device):
    """Correct logits, but one input labelled both ways: the loss stays near log 2, unsure."""
    x = torch.tensor([[1.0], [1.0]], device=device)
    y = torch.tensor([[1.0], [0.0]], device=device)
    with seeded(0):
        model = nn.Linear(1, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=1.0)
    for _ in range(STEPS):
        opt.zero_grad()
        nn.BCEWithLogitsLoss()(model(x), y).backward()
        opt.step()
    with torch.no_grad():
        out = model(x)
        losses = F.binary_cross_entropy_with_logits(out, y, reduction="none")
    return {"losses": losses.flatten(), "probs": torch.sigmoid(out).flatten()}


def check(run, device):
    """Each loss is the binary cross entropy of the reported probability, -log p or
    -log(1 - p), written out by hand, and their mean is below the double-sigmoid floor."""
    assert run.error is None, f"raised {run.error!r}"
    probs = run.value["probs"]
    by_hand = torch.stack([-torch.log(probs[0]), -torch.log(1 - probs[1])])
    torch.testing.assert_close(run.value["losses"], by_hand)
    assert run.value["losses"].mean().item() < (POSITIVE_FLOOR + NEGATIVE_FLOOR) / 2


def stable(value):
    """A hundred SGD steps: the losses and probabilities to 3 decimals."""
    return {k: [round(x, 3) for x in value[k].cpu().tolist()] for k in ("losses", "probs")}


CASE = Case(
    id="sigmoid-before-bce-with-logits",
    title="A sigmoid before BCEWithLogitsLoss",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss will not drop below about 0.5, though the model's probabilities are confident and right.",
    # BCEWithLogitsLoss has applied its own sigmoid since it was added; the floor
    # is arithmetic. No release is known to change it.
    affects=(Affects("*", reason="the loss applies a sigmoid of its own; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.nn.BCEWithLogitsLoss (combines a Sigmoid layer and BCELoss)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.BCEWithLogitsLoss.html",
        ),
        Source(
            title="lopuhin/kaggle-imet-2019#3: Sigmoid before BCEWithLogitsLoss",
            url="https://github.com/lopuhin/kaggle-imet-2019/issues/3",
        ),
        Source(
            title="NVIDIA-Merlin/models#1175: BCEWithLogitsLoss after a sigmoid output applies it twice",
            url="https://github.com/NVIDIA-Merlin/models/pull/1175",
        ),
    ),
    tags=("loss", "bce", "sigmoid", "logits"),
    references=(
        "https://github.com/yudi-mars/daisyRec/pull/15",
        "https://github.com/itakurah/focal-loss-pytorch/pull/5",
    ),
)
