# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Softmax before `CrossEntropyLoss`
#
# The classifier ends in `nn.Softmax`, because that is what a classifier outputs, and its
# output goes into `nn.CrossEntropyLoss`. Nothing fails. The loss starts lower than expected
# and hardly moves; the samples the model gets confidently wrong, the very ones it should
# learn from, send back almost no gradient.

# %%
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two samples of three classes, both labelled class 1. The first is confidently wrong (a
# large score on class 0), the second is confidently right. The scores go through a softmax
# and then into the loss.


# %%
def scores(device):
    return torch.tensor([[8.0, 0.0, 0.0], [0.0, 8.0, 0.0]], device=device, requires_grad=True)


LABELS = [1, 1]


def broken(device):
    logits = scores(device)
    target = torch.tensor(LABELS, device=device)
    probs = nn.Softmax(dim=1)(logits)  # the model's "output layer"
    loss = nn.CrossEntropyLoss()(probs, target)  # applies log-softmax a second time
    loss.backward()
    return {"loss": loss.detach(), "grad": logits.grad}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `CrossEntropyLoss` is `log_softmax` followed by the negative log-likelihood: it expects
# unnormalised scores. Fed probabilities, it normalises a second time. Probabilities lie in
# [0, 1], so the second softmax sees inputs that differ by at most 1: the loss is squeezed
# between `log(1 + (C-1)/e)` and `log(C - 1 + e)` (about 0.55 and 1.55 for three classes)
# however wrong the model is, here 1.05 instead of 4.0. Worse, the gradient must flow back
# through the first softmax, whose Jacobian is nearly zero once a score dominates: the
# confidently wrong sample gets a gradient of about 3e-4 instead of 0.5, so training stalls
# exactly on the examples it has to fix.
#
# ## The fix
# Give the loss the raw scores (logits). Apply `softmax` only where probabilities are
# needed, for reporting or prediction, outside the loss. With logits, the gradient of the
# mean cross entropy is `(softmax(x) - one_hot(y)) / N`, a closed form the check compares with.


# %%
def fixed(device):
    logits = scores(device)
    target = torch.tensor(LABELS, device=device)
    loss = nn.CrossEntropyLoss()(logits, target)
    loss.backward()
    return {"loss": loss.detach(), "grad": logits.grad}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post opens with this pitfall: PyTorch's cross entropy has the softmax built in, so
# the network should hand it raw outputs, as TensorFlow's
# `tf.nn.softmax_cross_entropy_with_logits` does; it points to two PyTorch forum threads, one of
# them linked above. The loss's documentation says the input is expected to contain unnormalised
# logits and that the loss equals `LogSoftmax` followed by `NLLLoss`; if the model must end in a
# normalisation, end it in `nn.LogSoftmax` and use `nn.NLLLoss`.

# %% [markdown]
# ## How the harness checks it
#
# A tiny gradient alone is not this pitfall: a sample the model already gets right sends back
# almost nothing too. Here the labels are read off by one, the first sample is labelled 0,
# the class it scores highest, and raw logits go in correctly: its gradient is just as small,
# but the loss is near 0, not stuck near 1.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S2


def symptom(run):
    """The confidently wrong sample gets a gradient near 0 (the true one is about 0.5), and the
    loss sits in the band a second softmax squeezes it into: between log(1 + 2/e) and
    log(2 + e) for three classes, however wrong the model is (here 1.05, not 4.0)."""
    if run.error is not None:
        return False
    low, high = math.log(1 + 2 / math.e), math.log(2 + math.e)
    return bool(run.value["grad"][0].abs().max() < 1e-2) and low <= run.value["loss"].item() <= high


def near_miss(device):
    logits = scores(device)
    target = torch.tensor([0, 1], device=device)  # labels shifted: the first sample is now right
    loss = nn.CrossEntropyLoss()(logits, target)
    loss.backward()
    return {"loss": loss.detach(), "grad": logits.grad}


def check(run, device):
    """The gradient is (softmax(x) - one_hot(y)) / N, the closed form, and the loss is
    log(sum(exp(row))) - row[label] averaged, in plain Python from the scores."""
    logits = scores(device).detach()
    target = torch.tensor(LABELS, device=device)
    expected_grad = (torch.softmax(logits, dim=1) - F.one_hot(target, 3)) / len(LABELS)
    # Each row's exponentials sum to e^8 + 2, and the label's score is 0 then 8.
    expected_loss = ((math.log(math.exp(8) + 2) - 0.0) + (math.log(math.exp(8) + 2) - 8.0)) / 2
    torch.testing.assert_close(run.value["grad"], expected_grad)
    torch.testing.assert_close(run.value["loss"], torch.tensor(expected_loss, device=device))


CASE = Case(
    id="cross-entropy-after-softmax",
    title="Softmax before CrossEntropyLoss",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The classification loss starts low and hardly moves: the outputs went through softmax twice.",
    # The loss has taken raw scores (logits) and applied log-softmax itself in every release;
    # this corpus observed the symptom on 2.13.0. No release changed it.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S2.at("section 'pytorch中的交叉熵' (cross entropy in PyTorch)"),),
    tags=("loss", "cross_entropy", "softmax", "logits"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.modules.loss.CrossEntropyLoss.html",
        "https://discuss.pytorch.org/t/do-i-need-to-use-softmax-before-nn-crossentropyloss/16739/2",
    ),
)
