# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A loss rebuilt from `.item()`: backward runs, nothing learns
#
# The training loop prints the same loss at every step, to the last digit. `loss.backward()`
# raises nothing and `optimizer.step()` runs, yet every parameter's `.grad` is `None` and no
# weight ever changes. Somewhere the loss was turned into a Python number (`.item()`, a NumPy
# metric) and wrapped back into `torch.tensor(value, requires_grad=True)`, usually to make
# the error "element 0 of tensors does not require grad and does not have a grad_fn" go
# away. The error went away because the new tensor has no past at all.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Linear regression with SGD. The loss is computed correctly, then rebuilt from its value.

# %%
STEPS = 20
LR = 0.1


def setup(device):
    with seeded(0):
        model = nn.Linear(3, 1)
        x = torch.randn(16, 3)
        y = torch.randn(16, 1)
    return model.to(device), x.to(device), y.to(device)


def train(model, x, y, rewrap):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    before = model.weight.detach().clone()
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        if rewrap:
            loss = torch.tensor(loss.item(), requires_grad=True, device=x.device)
        loss.backward()
        if step == 0:
            first_grad = None if model.weight.grad is None else model.weight.grad.clone()
            loss_is_leaf = loss.grad_fn is None
        opt.step()
        losses.append(loss.item())
    return {
        "loss_is_leaf": loss_is_leaf,
        "first_grad": first_grad,
        "weight_unchanged": torch.equal(model.weight, before),
        "loss_first": losses[0],
        "loss_last": losses[-1],
    }


def broken(device):
    model, x, y = setup(device)
    return train(model, x, y, rewrap=True)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `loss.item()` returns a Python float: the number survives, the record of how it was
# computed does not. `torch.tensor(number, requires_grad=True)` then creates a brand-new leaf
# tensor, like a parameter nobody uses. `backward()` on it is perfectly legal: the graph
# consists of that one leaf, its gradient is set to 1, and the walk ends there. The model's
# parameters are not in that graph, so their `.grad` stays `None`, and `optimizer.step()`
# skips every parameter without a gradient. The same happens with
# `torch.from_numpy(...)`, `torch.tensor(loss)` on a tensor, or `loss.detach().requires_grad_()`:
# anything that makes a new leaf out of the value. The original error was the honest
# message; it said that the loss was not connected to anything that can learn.
#
# ## The fix
# Keep the loss as the tensor autograd produced and call `backward()` on it; use `.item()`
# only for logging. If the error "does not require grad" appears, find where the graph was
# cut (a `.item()`, `.numpy()`, `.detach()` or `torch.no_grad()` on the way to the loss) and
# write that step with torch operations instead.


# %%
def fixed(device):
    model, x, y = setup(device)
    return train(model, x, y, rewrap=False)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# In isayev/ReLeaSE#39 a user replaced a loss term with its `.item()` (and a NumPy
# conversion) to get around a device error, found every layer's gradient `None` and the
# weights frozen, and re-wrapping the number as a tensor did not help; the maintainer's answer
# is the mechanism above: the value is detached, so there is nothing to back-propagate. Blog
# answers to "element 0 of tensors does not require grad and does not have a grad_fn" that
# recommend `loss.requires_grad_(True)` (one is linked below) lead straight here.
# torch-audit's rule TA104 ("No Gradients Found") reports a backward pass that left every
# parameter without a gradient. The behaviour of `.item()` and of leaf tensors has not changed
# in any release.

# %% [markdown]
# ## How the harness checks it
# A loss built from `.item()` without `requires_grad=True` does not train either, but it does
# not get that far: `backward()` raises `RuntimeError: element 0 of tensors does not require
# grad`. That error is the warning this pitfall silences, not the pitfall itself, so the
# symptom (a run that finished with no gradient anywhere) does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """backward() ran on a leaf loss: the weight got no gradient, never changed, and the loss
    printed at the last step is exactly the one printed at the first."""
    if run.error is not None:
        return False
    v = run.value
    return v["loss_is_leaf"] and v["first_grad"] is None and v["weight_unchanged"] and v["loss_first"] == v["loss_last"]


def near_miss(device):
    model, x, y = setup(device)
    loss = torch.tensor(F.mse_loss(model(x), y).item(), device=device)  # no requires_grad
    loss.backward()  # RuntimeError: element 0 of tensors does not require grad
    return {
        "loss_is_leaf": True,
        "first_grad": None,
        "weight_unchanged": True,
        "loss_first": loss.item(),
        "loss_last": loss.item(),
    }


def check(run, device):
    """The first gradient of the weight equals the closed form of the mean squared error,
    2/N * (x w^T + b - y)^T x, and the loss fell over the run."""
    model, x, y = setup(device)
    with torch.no_grad():
        residual = model(x) - y
        expected = 2.0 / len(x) * residual.T @ x
    assert run.value["first_grad"] is not None, "the weight got no gradient"
    torch.testing.assert_close(run.value["first_grad"], expected)
    assert run.value["loss_last"] < run.value["loss_first"], run.value


def stable(value):
    """Keep the structure; the trained loss varies in its last digits between releases."""
    return {
        "loss_is_leaf": value["loss_is_leaf"],
        "grad_none": value["first_grad"] is None,
        "weight_unchanged": value["weight_unchanged"],
        "loss_constant": value["loss_first"] == value["loss_last"],
    }


CASE = Case(
    id="loss-rewrapped-from-item",
    title="A loss rebuilt from .item(): backward runs, nothing learns",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss is identical at every step: it was rebuilt from .item(), so nothing gets a gradient.",
    # A new leaf made from a Python number has never had a history.
    affects=(Affects("*", reason="leaf tensors and .item() behave the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(title="isayev/ReLeaSE#39: Weights are not updating", url="https://github.com/isayev/ReLeaSE/issues/39"),
        Source(
            title="torch-audit (RULES.md), rule TA104: No Gradients Found", url="https://github.com/RMalkiv/torch-audit"
        ),
    ),
    tags=("autograd", "item", "leaf_tensor", "training"),
    references=(
        "https://blog.csdn.net/ZwaterZ/article/details/126193284",  # the loss.requires_grad_(True) "fix"
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.item.html",
    ),
)
