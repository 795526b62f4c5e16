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
# exactly gets a loss well above zero.

# %%
import torch
import torch.nn.functional as F

from harness import Case, observe
from harness.sources import S1

CASE = Case(
    id="target-shape-broadcast",
    title="A regression loss over (N, 1) predictions and (N,) targets",
    kind="silent",
    # Needs broadcasting (0.2.0 and later); observed here on 2.13.0. The hand-written loss
    # never warns; nn.MSELoss / F.mse_loss warn since pytorch/pytorch#18349 (2019) but still
    # return the same wrong number.
    affects=">=0.2",
    devices=("cpu", "cuda"),
    sources=(S1.at("troubleshooting list: a (300,) tensor is one-dimensional and differs from (300, 1)"),),
    tags=("shapes", "broadcasting", "loss", "mse"),
    references=(
        "https://github.com/pytorch/pytorch/issues/16045",  # (n, 1) vs (n,) loss: no error
        "https://github.com/pytorch/pytorch/pull/18349",  # the size warning in F.mse_loss
        "https://github.com/pytorch/pytorch/pull/18565",  # the same warning for the L1 losses
        "https://github.com/pytorch/pytorch/issues/19699",  # reported on 1.0.1, before the warning
        "https://docs.pytorch.org/docs/stable/notes/broadcasting.html",
    ),
)

# %% [markdown]
# ## The broken code
# A perfect model: each prediction equals its target, only the shapes differ.

# %%
def broken(device):
    target = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device)          # (N,)
    pred = torch.tensor([[1.0], [2.0], [3.0], [4.0]], device=device)    # (N, 1)
    return ((pred - target) ** 2).mean()                                # hand-written MSE


def symptom(run):
    """A perfect prediction scored a non-zero loss (2.5 here instead of 0)."""
    return run.error is None and run.value.item() > 0


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    # The library losses compute the same wrong 2.5, but say so with a UserWarning:
    t = torch.tensor([1.0, 2.0, 3.0, 4.0])
    print(observe(F.mse_loss, t[:, None], t))

# %% [markdown]
# ## Why
# `pred - target` broadcasts `(4, 1)` against `(4,)`, which is read as `(1, 4)`: the result is
# a `(4, 4)` table of every prediction minus every target. The mean then averages 16 squared
# differences, 12 of them between unrelated samples: `(i - j)²` over the grid is 40, and
# 40 / 16 = 2.5. The gradient pulls every prediction towards all targets at once, so the model
# learns the batch mean. `F.mse_loss`, `F.l1_loss` and `F.smooth_l1_loss` (and their modules)
# check the sizes and emit `UserWarning: Using a target size (torch.Size([4])) that is different
# to the input size (torch.Size([4, 1])) ...` on every call, then broadcast anyway and return
# the same 2.5. A loss written by hand, like the one above, gets no warning at all: that is why
# this case checks the value, the one symptom every form shares.
#
# ## The fix
# Make the shapes equal before combining them: `pred.squeeze(1)` (or `target.unsqueeze(1)`, or
# `target.view_as(pred)`). An assertion such as `assert pred.shape == target.shape` at the top
# of a loss function catches the next one.

# %%
def fixed(device):
    target = torch.tensor([1.0, 2.0, 3.0, 4.0], device=device)
    pred = torch.tensor([[1.0], [2.0], [3.0], [4.0]], device=device)
    perfect = ((pred.squeeze(1) - target) ** 2).mean()
    # A non-trivial prediction too: errors 0.5, -0.5, 1, 0 give (0.25 + 0.25 + 1 + 0) / 4.
    off = pred + torch.tensor([[0.5], [-0.5], [1.0], [0.0]], device=device)
    by_hand = ((off.squeeze(1) - target) ** 2).mean()
    library = F.mse_loss(off, target.unsqueeze(1))  # equal shapes: no warning
    torch.testing.assert_close(perfect, torch.tensor(0.0, device=device))
    torch.testing.assert_close(by_hand, torch.tensor(0.375, device=device))
    torch.testing.assert_close(library, torch.tensor(0.375, device=device))
    return perfect


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1) list, among their troubleshooting entries, that a tensor of shape
# `(300,)` is really one-dimensional and fundamentally different from `(300, 1)`; the loss above
# is where that difference bites hardest. It was reported upstream as a bug
# (pytorch/pytorch#16045: no error for a loss between `[n, 1]` and `[n]`; again in
# pytorch/pytorch#19699 on 1.0.1). The maintainers kept broadcasting, since some losses rely on
# it, and added the size warning to `F.mse_loss` (pytorch/pytorch#18349) and then to the L1
# losses (pytorch/pytorch#18565). On torch 2.13.0 `F.mse_loss` still warns and still returns
# the broadcast value; the hand-written loss stays silent. The range starts at 0.2 because
# 0.1.x had no broadcasting: a pointwise op between tensors with the same number of elements
# treated both as 1-D, so this very line returned the intended 0. The "backwards compatibility"
# section of the broadcasting notes uses exactly this pair of shapes, `(4, 1)` and `(4,)`, to
# show the result changing from `(4, 1)` to `(4, 4)`.
#
# The broadcast is decided from the shapes alone, so CUDA is expected to give the same 2.5; the
# CUDA side was not observed by this project's runs (CPU only).
