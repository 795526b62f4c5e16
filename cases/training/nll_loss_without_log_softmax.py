# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `NLLLoss` on probabilities instead of log-probabilities
#
# The classifier ends in `nn.Softmax(dim=1)` and its output goes into `nn.NLLLoss`, the
# "negative log-likelihood". The loss is negative from the first step, stays between -1 and 0,
# and creeps towards -1 while accuracy hardly improves. A negative log-likelihood of a
# probability can never be below zero: the loss received probabilities where it expects their
# logarithms, and computed something else.

# %%
import math

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two samples of three classes, both labelled class 1. The first is confidently wrong (a large
# score on class 0), the second confidently right. The scores go through a softmax, then into
# `NLLLoss`.

# %%
LABELS = [1, 1]


def scores(device):
    return torch.tensor([[8.0, 0.0, 0.0], [0.0, 8.0, 0.0]], device=device, requires_grad=True)


def broken(device):
    logits = scores(device)
    probs = nn.Softmax(dim=1)(logits)  # the model's output layer
    loss = nn.NLLLoss()(probs, torch.tensor(LABELS, device=device))
    loss.backward()
    return {"loss": loss.detach(), "nll_input": probs.detach(), "grad": logits.grad}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Despite its name, `NLLLoss` takes no logarithm: it picks the input's entry for the target
# class and negates it, `-input[n, y_n]`, averaged over the batch. It is a negative
# log-likelihood only when the input already holds log-probabilities, as `log_softmax`
# produces. Given probabilities, it returns minus the average probability of the right class:
# a number between -1 and 0, here -0.50 for a model that is certain and wrong on one sample
# (the true cross entropy is 4.0). The gradient is just as wrong: it is the softmax's Jacobian
# times a constant, so the confidently wrong sample, the one to learn from, gets almost
# nothing (about 2e-4 here), while a correct model would push it with about 0.5. With raw
# logits instead of probabilities the loss is unbounded below: the model can lower it forever
# by inflating the target's score, and the other classes get no gradient at all.
#
# ## The fix
# Feed `NLLLoss` log-probabilities: end the model in `nn.LogSoftmax(dim=1)` (or apply
# `F.log_softmax`), or drop the final layer and use `nn.CrossEntropyLoss`, which is
# `log_softmax` followed by `NLLLoss` in one step. The check compares with the cross entropy
# worked out by hand, `log(sum(exp(row))) - row[label]`, and with its gradient in closed form,
# `(softmax(x) - one_hot(y)) / N`.


# %%
def fixed(device):
    logits = scores(device)
    log_probs = nn.LogSoftmax(dim=1)(logits)
    loss = nn.NLLLoss()(log_probs, torch.tensor(LABELS, device=device))
    loss.backward()
    return {"loss": loss.detach(), "nll_input": log_probs.detach(), "grad": logits.grad}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `NLLLoss` documentation says the input is expected to contain log-probabilities, obtained
# by adding a `LogSoftmax` layer, and points to `CrossEntropyLoss` as the alternative; the
# `Softmax` documentation warns that it does not work directly with `NLLLoss` and that
# `LogSoftmax` should be used. Repositories meet it all the same: clvrai/ACGAN-PyTorch#4
# ("Change Softmax to LogSoftmax to use NLLLoss"), AnubhavGupta3377/Text-Classification-Models-Pytorch#9,
# where a model returned a softmax into `NLLLoss` and "the loss is always negative", and
# yanx27/Pointnet_Pointnet2_pytorch#30, a negative label loss from `nll_loss` on outputs that
# were not log-probabilities. `NLLLoss` has been defined this way in every release; the matrix
# observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A negative "negative log-likelihood" is not always this pitfall: a Gaussian likelihood is a
# density, which can exceed 1, so `GaussianNLLLoss` is legitimately negative when the predicted
# variance is small and the prediction close. The symptom asks for a negative loss *and* an
# input whose rows are probabilities (between 0 and 1, summing to 1), not log-probabilities.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """NLLLoss is negative, and the input it got holds probabilities: rows in [0, 1] that sum
    to 1, where log-probabilities (all <= 0) were expected."""
    if run.error is not None:
        return False
    x = run.value["nll_input"].cpu()
    probabilities = bool((x >= 0).all() and (x <= 1).all()) and torch.allclose(x.sum(dim=1), torch.ones(len(x)))
    return run.value["loss"].item() < 0 and probabilities


def near_miss(device):
    """A Gaussian negative log-likelihood with a small variance: negative, and correct."""
    mean = torch.tensor([[0.5, 0.2]], device=device)
    target = torch.tensor([[0.5, 0.2]], device=device)
    var = torch.full((1, 2), 0.01, device=device)
    loss = nn.GaussianNLLLoss()(mean, target, var)
    return {"loss": loss.detach(), "nll_input": mean, "grad": None}


def check(run, device):
    """The loss is the cross entropy by hand, mean of log(sum(exp(row))) - row[label], and the
    gradient is (softmax(x) - one_hot(y)) / N."""
    assert run.error is None, f"raised {run.error!r}"
    logits = scores(device).detach()
    target = torch.tensor(LABELS, device=device)
    # Each row's exponentials sum to e^8 + 2; the label's score is 0 in row 0 and 8 in row 1.
    expected_loss = ((math.log(math.exp(8) + 2) - 0.0) + (math.log(math.exp(8) + 2) - 8.0)) / 2
    torch.testing.assert_close(run.value["loss"], torch.tensor(expected_loss, device=device))
    expected_grad = (torch.softmax(logits, dim=1) - F.one_hot(target, 3)) / len(LABELS)
    torch.testing.assert_close(run.value["grad"], expected_grad)


CASE = Case(
    id="nll-loss-without-log-softmax",
    title="NLLLoss on probabilities instead of log-probabilities",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The negative log-likelihood loss is negative, between -1 and 0, and training barely moves.",
    # NLLLoss has computed -input[target] (no logarithm) in every release.
    affects=(Affects("*", reason="NLLLoss takes no logarithm itself; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.nn.NLLLoss (the input is expected to contain log-probabilities)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.NLLLoss.html",
        ),
        Source(
            title="clvrai/ACGAN-PyTorch#4: Change Softmax to LogSoftmax to use NLLLoss",
            url="https://github.com/clvrai/ACGAN-PyTorch/pull/4",
        ),
        Source(
            title="AnubhavGupta3377/Text-Classification-Models-Pytorch#9: NLLLoss (softmax in, the loss always negative)",
            url="https://github.com/AnubhavGupta3377/Text-Classification-Models-Pytorch/issues/9",
        ),
    ),
    tags=("loss", "nll_loss", "log_softmax", "softmax"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Softmax.html",
        "https://github.com/yanx27/Pointnet_Pointnet2_pytorch/issues/30",
    ),
)
