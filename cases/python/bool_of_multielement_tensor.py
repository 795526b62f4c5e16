# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # "Boolean value of Tensor with more than one value is ambiguous"
#
# The line `loss = nn.CrossEntropyLoss(outputs, labels)` fails with
# `RuntimeError: Boolean value of Tensor with more than one value is ambiguous`, although no
# `if` or `and` appears anywhere in it. Something asked a whole tensor whether it was true:
# here the loss class's constructor, which received your tensors as its configuration
# options. The same error comes from `if pred == label:` on a batch.

# %%
import math

import torch
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Logits for three samples over three classes and their labels, passed straight to the loss
# class, as one would call a function.

# %%
LOGITS = [[2.0, 0.5, -1.0], [0.1, 1.5, 0.3], [-0.5, 0.2, 0.9]]
LABELS = [0, 1, 2]


def broken(device):
    outputs = torch.tensor(LOGITS, device=device)
    labels = torch.tensor(LABELS, device=device)
    loss = nn.CrossEntropyLoss(outputs, labels)  # builds a module; the tensors become options
    return loss


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Python decides `if x:`, `x and y`, `x or y`, `not x` and `bool(x)` by asking the object for
# a single truth value. A tensor with one element can answer; a tensor with several cannot
# say whether it means "all true", "any true" or "non-empty", so it raises instead of
# guessing. Here the question is asked inside PyTorch: `nn.CrossEntropyLoss` is a class, and
# its constructor's positional parameters are `weight`, then the deprecated `size_average`.
# The labels land in `size_average`, and the code that translates the old flags into a
# `reduction` tests `if size_average and reduce:`, a truth test on a three-element tensor.
# The mistake is calling the class where one meant to call an instance (or the functional
# form), so the data became configuration.
#
# ## The fix
# Build the criterion once, then call it with the tensors:
# `criterion = nn.CrossEntropyLoss()` and `loss = criterion(outputs, labels)`, or call
# `F.cross_entropy(outputs, labels)` directly. Where your own code compares tensors, say
# which answer you mean: `(pred == label).all()`, `.any()`, or `.item()` for a one-element
# tensor.


# %%
def fixed(device):
    outputs = torch.tensor(LOGITS, device=device)
    labels = torch.tensor(LABELS, device=device)
    criterion = nn.CrossEntropyLoss()
    return criterion(outputs, labels)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Stack Overflow question 52946920 ("Bool value of Tensor with more than one value is ambiguous
# in Pytorch") is exactly this line, `nn.CrossEntropyLoss(outputs, targets)`, and the same
# report reached Lightning-AI/pytorch-lightning#501, answered by pointing out that the loss is
# a class (use `F.cross_entropy`), and imranparuk/speaker-recognition-3d-cnn#2. The `if` form
# appears as kingsman142/captcha-solver#2 (`correct += 1 if pred_label == labels[0] else 0` on
# a batch). A multi-element tensor has refused a truth value in every release (the message
# said "bool value" in older ones, "Boolean value" now).

# %% [markdown]
# ## How the harness checks it
# The symptom is a `RuntimeError` whose message is about the truth value of a multi-element
# tensor. Turning a multi-element tensor into a number instead, for example calling `.item()`
# on a per-sample loss computed with `reduction="none"`, also raises a `RuntimeError` about a
# tensor with several elements, but it is a conversion to a scalar, not a truth test, and the
# symptom refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """A RuntimeError about the truth value of a tensor with more than one value."""
    return run.raised(RuntimeError, r"(bool|boolean) value of tensor with more than one value is ambiguous")


def near_miss(device):
    outputs = torch.tensor(LOGITS, device=device)
    labels = torch.tensor(LABELS, device=device)
    per_sample = nn.CrossEntropyLoss(reduction="none")(outputs, labels)
    return per_sample.item()  # three elements: cannot be one Python number


def check(run, device):
    """The mean over samples of logsumexp(row) - row[label], computed with `math` by hand."""
    per_sample = [math.log(sum(math.exp(v) for v in row)) - row[label] for row, label in zip(LOGITS, LABELS)]
    expected = torch.tensor(sum(per_sample) / len(per_sample), device=device)
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="bool-of-multielement-tensor",
    title='"Boolean value of Tensor with more than one value is ambiguous"',
    kind="error",
    symptom_category="error",
    symptom_line="nn.CrossEntropyLoss(outputs, labels) raises: Boolean value of Tensor with more than one value is ambiguous.",
    # Tensor.__bool__ has refused multi-element tensors since the first releases, and the loss
    # constructors have kept the positional (weight, size_average, ...) signature.
    affects=(Affects("*", reason="a multi-element tensor has no truth value; the same in every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Stack Overflow 52946920: Bool value of Tensor with more than one value is ambiguous in Pytorch",
            url="https://stackoverflow.com/questions/52946920/bool-value-of-tensor-with-more-than-one-value-is-ambiguous-in-pytorch",
        ),
        Source(
            title="Lightning-AI/pytorch-lightning#501: RuntimeError: bool value of Tensor with more "
            "than one value is ambiguous",
            url="https://github.com/Lightning-AI/pytorch-lightning/issues/501",
        ),
        Source(
            title="kingsman142/captcha-solver#2: Boolean value of Tensor with more than one value is "
            "ambiguous (an `if` on a batch)",
            url="https://github.com/kingsman142/captcha-solver/issues/2",
        ),
    ),
    tags=("python", "truth_value", "loss", "nn_module"),
    references=(
        "https://pytorch.org/docs/stable/generated/torch.nn.CrossEntropyLoss.html",
        "https://github.com/imranparuk/speaker-recognition-3d-cnn/issues/2",
        "https://docs.python.org/3/reference/datamodel.html#object.__bool__",
    ),
)
