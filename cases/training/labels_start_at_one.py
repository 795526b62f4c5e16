# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Class labels that start at 1
#
# The annotation file numbers its three classes 1, 2 and 3, the way people count. The model has
# three outputs, one per class. The first call to `F.cross_entropy` stops with `IndexError:
# Target 3 is out of bounds.` PyTorch counts classes from 0: a head with three outputs knows
# classes 0, 1 and 2, and label 3 points past its last logit. On a GPU the same line fails later
# and less helpfully, with a device-side assert.

# %%
import math
import re

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Six samples with their labels as the annotation file writes them (1 = cat, 2 = dog, 3 = bird),
# a linear classifier with three outputs, and one loss computation, logged with `.item()` as a
# training loop would.

# %%
CLASSES = 3
LABELS_AS_ANNOTATED = [1, 3, 2, 1, 3, 2]  # 1 = cat, 2 = dog, 3 = bird


def samples(device):
    g = torch.Generator().manual_seed(0)
    return torch.randn(len(LABELS_AS_ANNOTATED), 4, generator=g).to(device)


def head(device):
    with seeded(0):
        return nn.Linear(4, CLASSES).to(device)


def broken(device):
    x = samples(device)
    labels = torch.tensor(LABELS_AS_ANNOTATED, device=device)
    loss = F.cross_entropy(head(device)(x), labels)
    return loss.item()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `cross_entropy` (and `nll_loss`, `CrossEntropyLoss`, `NLLLoss`) takes class *indices*: for
# each sample it picks the logit at position `target` out of the `C` logits of that row. Valid
# positions are `0 .. C-1`. The CPU kernel checks every target and raises an `IndexError` naming
# the first one out of range. The CUDA kernel checks them only with a device-side assertion,
# which aborts the kernel and surfaces as `RuntimeError: CUDA error: device-side assert
# triggered` at a later synchronising call (here the `.item()`), and leaves the CUDA context
# unusable for the rest of the process. Two "fixes" make it silent instead: widening the head to
# `C + 1` outputs (class 0 then exists, is never a target, and the logits are off by one from
# the names), or dropping the samples of the last class until the error stops.
#
# ## The fix
# Map the labels to `0 .. C-1` once, where the data is read: `labels - 1` for labels numbered
# from 1, or a lookup table (`{"cat": 0, ...}`) for names and sparse ids, and assert the range
# there (`0 <= labels.min()` and `labels.max() < C`), where a bad file fails with a message of
# your own. The check recomputes the loss by hand, as the mean over samples of
# `logsumexp(logits) - logits[label - 1]`.


# %%
def fixed(device):
    x = samples(device)
    labels = torch.tensor(LABELS_AS_ANNOTATED, device=device) - 1  # 1..C -> 0..C-1
    assert 0 <= labels.min().item() and labels.max().item() < CLASSES
    loss = F.cross_entropy(head(device)(x), labels)
    return loss.item()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `CrossEntropyLoss` documentation states that class-index targets must lie in `[0, C)`.
# pytorch/pytorch#39769 ("CrossEntropyLoss or NLLLoss does not check values of the target?")
# shows both behaviours: on the CPU a target equal to the number of classes raises `IndexError:
# Target 5 is out of bounds.`, and the maintainers point to a CUDA bug in 1.5.0 that let it pass
# silently (fixed in 1.5.1). In anheidelonghu/ACNet#14 a reader asks why the loss code subtracts
# 1 from the targets, and the answer is this mapping: the dataset's class ids run from 1 to N,
# and the loss needs 0 to N-1. The CPU's `IndexError` is what every release of the matrix
# raises.

# %% [markdown]
# ## How the harness checks it
# Not every "Target ... is out of bounds" is a label numbered from 1. A label of -1, a "missing"
# marker left in the file, fails with the same `IndexError` (`Target -1 is out of bounds.`);
# that is a data-cleaning bug (or a job for `ignore_index`). The symptom asks for the target
# that equals the number of classes, the one a 1-based numbering produces, and does not claim
# -1.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """On the CPU ("index-error"): an IndexError naming target C, the label one past the last
    class. On CUDA ("device-side assert"): the kernel's assertion, a RuntimeError
    (torch.AcceleratorError from 2.8) raised by a later synchronising call."""
    if run.raised(IndexError, rf"\bTarget {CLASSES} is out of bounds"):
        return "index-error"
    if isinstance(run.error, RuntimeError) and re.search(r"device-side assert", str(run.error), re.IGNORECASE):
        return "device-side assert"
    return False


def near_miss(device):
    """Labels already 0-based, but one of them is the missing-value marker -1."""
    x = samples(device)
    labels = torch.tensor([0, 2, 1, -1, 2, 1], device=device)
    return F.cross_entropy(head(device)(x), labels).item()


def check(run, device):
    """The loss equals the mean of logsumexp(logits) - logits[label - 1], worked out by hand in
    double precision."""
    assert run.error is None, f"raised {run.error!r}"
    with torch.no_grad():
        logits = head(device)(samples(device)).double().cpu().tolist()
    by_hand = sum(
        math.log(sum(math.exp(z) for z in row)) - row[label - 1] for row, label in zip(logits, LABELS_AS_ANNOTATED)
    ) / len(logits)
    assert abs(run.value - by_hand) < 1e-5, (run.value, by_hand)


def stable(value):
    """The loss to 5 significant digits."""
    return float(f"{value:.5g}")


CASE = Case(
    id="labels-start-at-one",
    title="Class labels that start at 1",
    kind="error",
    symptom_category="error",
    symptom_line="cross_entropy raises IndexError: Target 3 is out of bounds: the labels run 1..3 and the classes 0..2.",
    # Class-index targets have been 0-based, and checked on the CPU, in every release; the
    # CUDA kernel checks them with a device-side assertion (its form there; see "Why").
    affects=(
        Affects(device="cpu", form="index-error", reason="the CPU kernel checks each target against [0, C)"),
        Affects(device="cuda", form="device-side assert", reason="the CUDA kernel checks targets with an assertion"),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.nn.CrossEntropyLoss (class indices in the range [0, C))",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html",
        ),
        Source(
            title="pytorch/pytorch#39769: CrossEntropyLoss or NLLLoss does not check values of the target?",
            url="https://github.com/pytorch/pytorch/issues/39769",
        ),
        Source(
            title="anheidelonghu/ACNet#14: CrossEntropyLoss2d (why the targets are shifted by 1)",
            url="https://github.com/anheidelonghu/ACNet/issues/14",
        ),
    ),
    tags=("training", "cross_entropy", "labels", "index_error"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html",
        "https://github.com/EricFillion/happy-transformer/issues/248",  # "the lowest valid label is 0"
    ),
    isolate=("cuda",),  # the device-side assert poisons the CUDA context: one process per variant
)
