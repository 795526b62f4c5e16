# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `argmax(0)` on a batch of logits picks samples, not classes
#
# Your evaluation computes accuracy as `(logits.argmax(0) == labels).float().mean()`. With most
# batch sizes it crashes on a shape mismatch, so you would notice; but when the batch happens
# to have as many samples as there are classes, it runs and prints a plausible, wrong number.
# `argmax(0)` reduces over the batch dimension: for each class it returns the index of the
# sample that scored it highest.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Logits for a batch of 4 samples over 4 classes (the model's output, written out), with the
# true labels. The model gets samples 0, 1 and 2 right and sample 3 wrong: accuracy 0.75.

# %%
LOGITS = [
    [2.0, 0.1, 0.3, 0.2],  # sample 0: predicts class 0
    [0.4, 1.8, 0.2, 0.1],  # sample 1: predicts class 1
    [0.3, 2.2, 0.5, 0.0],  # sample 2: predicts class 1
    [0.1, 0.2, 0.9, 0.3],
]  # sample 3: predicts class 2
LABELS = [0, 1, 1, 3]


def evaluate(device, dim):
    logits = torch.tensor(LOGITS, device=device)  # (batch, classes)
    labels = torch.tensor(LABELS, device=device)
    preds = logits.argmax(dim)
    return {"preds": preds, "accuracy": (preds == labels).float().mean().item()}


def broken(device):
    return evaluate(device, dim=0)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `argmax(dim)` removes the dimension it searches along. Logits are laid out
# `(batch, classes)`, so the class of each sample is found along dimension 1; `argmax(0)`
# searches down each column instead and answers another question: which sample is most
# confident about class *c*? Here that gives `[0, 2, 3, 3]` (sample 2 has the highest score
# for class 1, sample 3 for classes 2 and 3), which happens to agree with the labels twice:
# accuracy 0.5. The result has one entry per class, so comparing it with one label per sample
# only goes through without complaint when the two counts are equal, as with a batch of 10 on
# a 10-class problem, or when the batch holds a single sample, whose one label is then
# broadcast against every class. The same slip hides in
# `torch.max(logits, 0)` and in segmentation maps, where the batch dimension comes first too.
#
# ## The fix
# Reduce over the class dimension, and name it: `logits.argmax(dim=1)` (or `dim=-1` when the
# classes are last). Checking `preds.shape == labels.shape` before comparing catches the slip
# for every batch size.


# %%
def fixed(device):
    return evaluate(device, dim=1)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `torch.argmax` documentation defines `dim` as the dimension to reduce, so the returned
# indices run along that dimension. The slip shows up in real code: jolibrain/deepdetect#1567
# fixed a segmentation evaluation where the argmax ran over the batch dimension instead of the
# classes, which gave wrong metrics; Zasder3/train-CLIP#6 is a cousin, an accuracy computed
# with `argmax` over the wrong axes (there, over all elements). It is the semantics of a
# reduction, the same in every release.

# %% [markdown]
# ## How the harness checks it
# An accuracy of 0.5 is not by itself this pitfall: a model that really gets two of the four
# samples wrong scores the same with the correct `argmax(dim=1)`. The symptom asks that the
# predictions be the per-class winners, `LOGITS.argmax(0)`, and not the per-sample ones, so it
# refuses that look-alike.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The predictions are one sample index per class (the argmax over the batch dimension),
    not one class per sample, and the accuracy computed from them is 0.5 instead of 0.75."""
    if run.error is not None:
        return False
    preds = run.value["preds"].cpu()
    logits = torch.tensor(LOGITS)
    return (
        torch.equal(preds, logits.argmax(0))
        and not torch.equal(preds, logits.argmax(1))
        and run.value["accuracy"] == 0.5
    )


def near_miss(device):
    weaker = [
        [2.0, 0.1, 0.3, 0.2],
        [0.4, 0.3, 1.2, 0.1],  # now wrong: class 2
        [0.3, 2.2, 0.5, 0.0],
        [0.1, 0.2, 0.9, 0.3],
    ]  # wrong: class 2
    logits = torch.tensor(weaker, device=device)
    preds = logits.argmax(dim=1)
    labels = torch.tensor(LABELS, device=device)
    return {"preds": preds, "accuracy": (preds == labels).float().mean().item()}


def check(run, device):
    """Predictions read off the rows by hand: classes 0, 1, 1, 2; three of the four labels
    [0, 1, 1, 3] match, accuracy 0.75."""
    assert torch.equal(run.value["preds"].cpu(), torch.tensor([0, 1, 1, 2])), run.value
    assert run.value["accuracy"] == 0.75, run.value


CASE = Case(
    id="argmax-over-batch-dim",
    title="argmax(0) on a batch of logits picks samples, not classes",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Accuracy looks plausible but is wrong: argmax(0) gave one sample per class, not a class per sample.",
    # The meaning of `dim` in a reduction; no release changed it.
    affects=(Affects("*", reason="argmax reduces the dimension it is given; the same in every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="jolibrain/deepdetect#1567: fix(torch): segmentation with test_batch_size > 1 "
            "(argmax over the batch dimension instead of the classes)",
            url="https://github.com/jolibrain/deepdetect/pull/1567",
        ),
        Source(
            title="Zasder3/train-CLIP#6: About the accuracy computation",
            url="https://github.com/Zasder3/train-CLIP/issues/6",
        ),
        Source(title="PyTorch docs: torch.argmax", url="https://pytorch.org/docs/stable/generated/torch.argmax.html"),
    ),
    tags=("shapes", "argmax", "metrics", "evaluation"),
    references=("https://pytorch.org/docs/stable/generated/torch.max.html",),
)
