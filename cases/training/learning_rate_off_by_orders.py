# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A learning rate off by orders of magnitude
#
# The loss printed at step 100 is the loss printed at step 0, give or take the fourth digit.
# Gradients are there, the optimizer steps, the weights do change, and nothing learns. The
# learning rate is `1e-6`, copied from a fine-tuning recipe for a large pretrained model, on
# a small model trained from scratch: each step moves the weights by a millionth of the
# gradient. (Off by as many orders the other way, `lr=10`, the loss does not sit still, it
# explodes to `inf` and `nan`.) Either way the cheapest diagnosis is the same: try to overfit
# one batch.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Linear regression on 32 samples whose targets are an exact linear function of the inputs,
# so a correct training loop can drive the loss to zero. SGD for 100 steps with `lr=1e-6`.

# %%
STEPS = 100
W_TRUE = [1.0, -2.0, 0.5, 3.0]
B_TRUE = 0.5


def setup(device):
    with seeded(0):
        model = nn.Linear(4, 1)
        x = torch.randn(32, 4)
    y = x @ torch.tensor(W_TRUE).unsqueeze(1) + B_TRUE
    return model.to(device), x.to(device), y.to(device)


def train(device, lr):
    model, x, y = setup(device)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    before = model.weight.detach().clone()
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if step == 0:
            first_grad_norm = model.weight.grad.norm().item()
        opt.step()
        losses.append(loss.item())
    return {
        "lr": lr,
        "loss_first": losses[0],
        "loss_last": losses[-1],
        "first_grad_norm": first_grad_norm,
        "max_weight_change": (model.weight - before).abs().max().item(),
        "weight": model.weight.detach().clone(),
        "bias": model.bias.detach().clone(),
    }


def broken(device):
    return train(device, lr=1e-6)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Plain gradient descent moves each weight by `lr * gradient`. Here the first gradient has a
# norm of about 7.5, so a step changes the weights by a few millionths; after 100 steps they
# have moved by about 5e-4 while they need to move by about 3, and the loss has fallen by
# less than a tenth of a percent. Nothing in PyTorch can flag this: the code is correct,
# only a number is wrong. The useful learning rate depends on the optimizer, the scale of the
# loss and of the inputs, and the model; `2e-5` is a common choice for AdamW fine-tuning a
# large pretrained transformer, `0.1` suits SGD on this problem, and a value copied from one
# setting to another can be off by four orders of magnitude. Too large fails loudly (the
# steps overshoot, the loss grows, then overflows to `inf`, then `nan`); too small fails
# silently, and looks exactly like a bug in the model or the data.
#
# ## The fix
# Before the real run, take one batch and train on it alone for a few hundred steps: a
# correct pipeline with a sensible learning rate drives that loss to (nearly) zero. If it
# does not move, the learning rate (or the gradient flow) is wrong; if it explodes, the
# learning rate is too large. Here `lr=0.1` overfits the batch within the same 100 steps and
# recovers the weights that generated the targets.


# %%
def fixed(device):
    return train(device, lr=0.1)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Andrej Karpathy's "A Recipe for Training Neural Networks" (2019) makes overfitting a single
# batch one of the first steps of building a training pipeline (reach a loss of zero on a
# couple of examples before anything else) and lists a mis-set learning rate among the errors
# that fail without a sign. A PyTorch Forums thread, "Loss of single batch optimization",
# asks what it means when the loss on one repeated batch goes only from 5.5 to 4.7; the
# answer is that a standard criterion should converge to (nearly) zero, and that failing to
# overfit a single batch means the training setup itself is wrong. Nothing here depends on
# the torch release.

# %% [markdown]
# ## How the harness checks it
# The other half of the mistake, `lr=10`, is not this symptom: its loss does not stay put, it
# grows without bound and ends as `inf` or `nan`. The symptom asks for a finite loss that fell
# by less than 1% while the gradients were clearly non-zero, so an exploding run is refused
# (and so is a run where no gradient reached the weights at all).

# %% tags=["hide-cell"]
import math

from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Gradients were substantial (norm > 0.1) and the weights did move, yet after 100 steps
    the finite loss fell by less than 1%."""
    if run.error is not None:
        return False
    v = run.value
    first, last = v["loss_first"], v["loss_last"]
    return (
        math.isfinite(first)
        and math.isfinite(last)
        and 0.99 * first < last <= first
        and v["first_grad_norm"] > 0.1
        and 0 < v["max_weight_change"] < 1e-3
    )


def near_miss(device):
    return train(device, lr=10.0)  # off the other way: the loss explodes


def check(run, device):
    """The batch is overfitted: the final loss is below 1e-6 and the weights equal the least-
    squares solution computed independently with torch.linalg.lstsq (which, the targets being
    exact, is the generating W_TRUE and B_TRUE)."""
    _, x, y = setup(device)
    design = torch.cat([x, torch.ones(len(x), 1, device=device)], dim=1).double()
    solution = torch.linalg.lstsq(design.cpu(), y.double().cpu()).solution.squeeze(1)
    assert run.value["loss_last"] < 1e-6, run.value["loss_last"]
    torch.testing.assert_close(run.value["weight"].squeeze(0).double().cpu(), solution[:4], rtol=0, atol=1e-3)
    torch.testing.assert_close(run.value["bias"].double().cpu(), solution[4:], rtol=0, atol=1e-3)
    torch.testing.assert_close(solution, torch.tensor(W_TRUE + [B_TRUE], dtype=torch.float64), rtol=0, atol=1e-6)


def stable(value):
    """Keep the learning rate and the outcome; the floats vary in their last digits."""
    first, last = value["loss_first"], value["loss_last"]
    return {
        "lr": value["lr"],
        "finite": math.isfinite(last),
        "relative_drop_below_1pct": math.isfinite(last) and last > 0.99 * first,
        "overfitted": math.isfinite(last) and last < 1e-6,
    }


CASE = Case(
    id="learning-rate-off-by-orders",
    title="A learning rate off by orders of magnitude",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss after 100 steps equals the loss at step 0: the learning rate is 1e-6.",
    # Arithmetic of gradient descent, the same on every release.
    affects=(Affects("*", reason="plain SGD arithmetic, the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Andrej Karpathy: A Recipe for Training Neural Networks (2019), 'overfit one batch'",
            url="https://karpathy.github.io/2019/04/25/recipe/",
        ),
        Source(
            title="PyTorch Forums: Loss of single batch optimization",
            url="https://discuss.pytorch.org/t/loss-of-single-batch-optimization/128480",
        ),
    ),
    tags=("training", "learning_rate", "optimizer", "sanity_check"),
    references=("https://docs.pytorch.org/docs/stable/generated/torch.optim.SGD.html",),
)
