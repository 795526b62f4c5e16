# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A regression loss over (N, 1) predictions and (N,) targets
#
# Your regression model ends in `nn.Linear(..., 1)`, so its predictions have shape `(N, 1)`;
# the dataset yields targets of shape `(N,)`. You write the mean squared error by hand,
# `((pred - target) ** 2).mean()`, and it returns a perfectly ordinary number. The model
# trains, slowly, towards predicting the batch mean. Even a model that predicts every target
# exactly gets a loss well above zero. `nn.MSELoss` returns the same wrong number, with a
# `UserWarning` about the target size that scrolls past in a training log.

# %%
import math

import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A perfect model: each prediction equals its target, only the shapes differ. The loss is taken
# twice, written by hand and with `nn.MSELoss`.

# %%
PRED = [1.0, 2.0, 3.0, 4.0]  # a perfect model: every prediction equals its target
TARGET = [1.0, 2.0, 3.0, 4.0]


def broken(device):
    target = torch.tensor(TARGET, device=device)  # (N,)
    pred = torch.tensor(PRED, device=device)[:, None]  # (N, 1), as nn.Linear(..., 1) gives
    return {
        "by hand": ((pred - target) ** 2).mean(),  # a hand-written MSE
        "nn.MSELoss": nn.MSELoss()(pred, target),
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `pred - target` broadcasts `(4, 1)` against `(4,)`, which is read as `(1, 4)`: the result is
# a `(4, 4)` table of every prediction minus every target. The mean then averages 16 squared
# differences, 12 of them between unrelated samples: `(i - j)²` over the grid is 40, and
# 40 / 16 = 2.5. The gradient pulls every prediction towards all targets at once, so the model
# learns the batch mean. `F.mse_loss`, `F.l1_loss` and `F.smooth_l1_loss` (and their modules)
# check the sizes and emit `UserWarning: Using a target size (torch.Size([4])) that is different
# to the input size (torch.Size([4, 1])) ...` on every call, then broadcast anyway and return
# the same 2.5. A loss written by hand, like the one above, gets no warning at all. The symptom
# asks for both: the wrong value of both losses, and the library's warning (before
# pytorch/pytorch#18349 there was no warning, the "silent" form).
#
# ## The fix
# Make the shapes equal before combining them: `pred.squeeze(1)` (or `target.unsqueeze(1)`, or
# `target.view_as(pred)`). An assertion such as `assert pred.shape == target.shape` at the top
# of a loss function catches the next one.


# %%
def fixed(device):
    target = torch.tensor(TARGET, device=device)
    pred = torch.tensor(PRED, device=device)[:, None]
    return {
        "by hand": ((pred.squeeze(1) - target) ** 2).mean(),
        "nn.MSELoss": nn.MSELoss()(pred.squeeze(1), target),  # equal shapes: no warning
    }


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))
    # A non-trivial prediction too: errors 0.5, -0.5, 1, 0 give (0.25 + 0.25 + 1 + 0) / 4 = 0.375.
    t = torch.tensor(TARGET)
    off = t[:, None] + torch.tensor([[0.5], [-0.5], [1.0], [0.0]])
    print(((off.squeeze(1) - t) ** 2).mean(), F.mse_loss(off, t.unsqueeze(1)))

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1) list, among their troubleshooting entries, that a tensor of shape
# `(300,)` is really one-dimensional and fundamentally different from `(300, 1)`; the loss above
# is where that difference bites hardest. It was reported upstream as a bug
# (pytorch/pytorch#16045: no error for a loss between `[n, 1]` and `[n]`; again in
# pytorch/pytorch#19699 on 1.0.1). The maintainers kept broadcasting, since some losses rely on
# it, and added the size warning to `F.mse_loss` (pytorch/pytorch#18349) and then to the L1
# losses (pytorch/pytorch#18565). On torch 2.13.0 `F.mse_loss` still warns and still returns
# the broadcast value; the hand-written loss stays silent. The hand-written line has been wrong
# since 0.2.0: 0.1.x had no broadcasting, and a pointwise op between tensors with the same
# number of elements treated both as 1-D, so it returned the intended 0. The "backwards
# compatibility" section of the broadcasting notes uses exactly this pair of shapes, `(4, 1)`
# and `(4,)`, to show the result changing from `(4, 1)` to `(4, 4)`. The library loss is
# another matter: on 0.3 `F.mse_loss` paired the elements one by one instead of broadcasting
# (pytorch/pytorch#4938), and on 0.4 it raised "input and target shapes do not match" for
# tensors without grad (pytorch/pytorch#12129; the reporter of #16045 heard it raised on 0.4).
# From 1.0.0 it broadcasts: #16045 and pytorch/pytorch#16413 (1.0.0, a loss of 1.3333 for
# `[1, 2, 3]` against `[[1], [2], [3]]`, the mean over all 9 pairs) and #19699 (1.0.1) saw it
# with no warning. So `affects` starts at 1.0, where both losses average all pairs, "silent"
# until the warning arrived.

# %% [markdown]
# ## How the harness checks it
#
# Another loss that is wrong and warns: code written for torch 0.4 passes
# `size_average=False`. With matching shapes the loss is a sum instead of a mean (1.5 instead of
# 0.375 for these errors), and the `UserWarning` is about the deprecated argument.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1

# Worked out in plain Python: the mean over all N×N (prediction, target) pairs is 40/16 = 2.5,
# the mean over the N matching pairs is 0.
ALL_PAIRS = sum((p - t) ** 2 for p in PRED for t in TARGET) / (len(PRED) * len(TARGET))


MATCHING_PAIRS = sum((p - t) ** 2 for p, t in zip(PRED, TARGET)) / len(PRED)


def symptom(run):
    """Both losses are the mean over all N×N pairs (2.5, not 0); named by whether nn.MSELoss
    warned about the target size."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    losses = [run.value.get(key) for key in ("by hand", "nn.MSELoss")]
    if not all(isinstance(v, torch.Tensor) and v.numel() == 1 and math.isclose(v.item(), ALL_PAIRS) for v in losses):
        return False
    warned = run.warned(UserWarning, r"target size .* different to the input size")
    return "warning" if warned else "silent"


def near_miss(device):
    target = torch.tensor(TARGET, device=device)[:, None]
    pred = target + torch.tensor([[0.5], [-0.5], [1.0], [0.0]], device=device)
    return {
        "by hand": ((pred - target) ** 2).sum(),
        "nn.MSELoss": nn.MSELoss(size_average=False)(pred, target),
    }


def check(run, device):
    """Both losses are the mean over the N matching pairs only, summed in plain Python: 0 for
    this perfect model."""
    for key in ("by hand", "nn.MSELoss"):
        torch.testing.assert_close(run.value[key], torch.tensor(MATCHING_PAIRS, device=device))


CASE = Case(
    id="target-shape-broadcast",
    title="A regression loss over (N, 1) predictions and (N,) targets",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="A hand-written MSE over (N, 1) predictions and (N,) targets averages an N×N table.",
    # From 1.13.1 on the matrix observes the "warning" form. The hand-written loss never warns
    # (it broadcasts since 0.2.0); nn.MSELoss / F.mse_loss warn since pytorch/pytorch#18349 but
    # still return the same wrong number. Before that PR both losses were silent (the reports
    # on 1.0.0 and 1.0.1); that older range lies below the matrix and is not observed here.
    affects=(
        Affects(
            ">=1.1",
            form="warning",
            since="pytorch/pytorch#18349 added the size warning to F.mse_loss in March 2019; 1.1.0 (April "
            "2019) is the first release after it (inferred from the dates)",
            reason="both losses average all N×N pairs; nn.MSELoss warns about the target size",
            issue="https://github.com/pytorch/pytorch/pull/18349",
        ),
        Affects(
            ">=1.0,<1.1",
            form="silent",
            since="reported without any warning on 1.0.0 (pytorch/pytorch#16045, #16413) and 1.0.1 (#19699); "
            "on 0.4 the library loss still refused the shapes (#16045, #12129)",
            reason="both losses average all N×N pairs, and nothing warns",
            issue="https://github.com/pytorch/pytorch/issues/16045",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("troubleshooting list: a (300,) tensor is one-dimensional and differs from (300, 1)"),),
    tags=("shapes", "broadcasting", "loss", "mse"),
    references=(
        "https://github.com/pytorch/pytorch/issues/16045",  # (n, 1) vs (n,) loss: no error
        "https://github.com/pytorch/pytorch/pull/18349",  # the size warning in F.mse_loss
        "https://github.com/pytorch/pytorch/pull/18565",  # the same warning for the L1 losses
        "https://github.com/pytorch/pytorch/issues/19699",  # reported on 1.0.1, before the warning
        "https://github.com/pytorch/pytorch/issues/16413",  # 1.0.0: the all-pairs mean, no warning
        "https://github.com/pytorch/pytorch/issues/12129",  # 0.4: mse_loss refused the shapes
        "https://github.com/pytorch/pytorch/issues/4938",  # 0.3: mse_loss paired element by element
        "https://docs.pytorch.org/docs/stable/notes/broadcasting.html",
    ),
)
