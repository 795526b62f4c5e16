# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Every ReLU dead from the first step
#
# A small regression network trains without an error, and its loss drops once, to the variance
# of the targets, and stays there: the model predicts the same number for every input. The
# hidden layer's weights end the run exactly as they started, bit for bit. Every hidden unit's
# pre-activation is negative on every sample, so every ReLU outputs 0, and a ReLU that outputs 0
# passes back a gradient of exactly 0: nothing before it can learn, and nothing after it has
# anything to read.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# An initialisation helper, applied with `model.apply(...)`, sets every `nn.Linear` bias to -3.
# The value comes from Highway networks, where a negative bias keeps a *sigmoid gate* mostly
# closed at the start; here it lands on a ReLU layer whose inputs are standardised, so `w·x` is
# rarely larger than 1. The network is trained for 100 steps of SGD; the function records the
# hidden layer's first gradient, the fraction of active ReLUs and whether the hidden layer
# changed.

# %%
STEPS = 100
GATE_BIAS = -3.0  # a "start closed" bias for sigmoid gates


def data(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 4, generator=g)
    y = x @ torch.tensor([[1.0], [-2.0], [0.5], [3.0]])
    return x.to(device), y.to(device)


def network():
    return nn.Sequential(nn.Linear(4, 16), nn.ReLU(), nn.Linear(16, 1))


def train(model, x, y):
    hidden = model[0]
    start = (hidden.weight.detach().clone(), hidden.bias.detach().clone())
    opt = torch.optim.SGD(model.parameters(), lr=0.05)
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if step == 0:
            first_hidden_grad = hidden.weight.grad.clone()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        active = (hidden(x) > 0).float().mean().item()
    return {
        "active_fraction": active,
        "first_hidden_grad": first_hidden_grad,
        "hidden_unchanged": torch.equal(hidden.weight, start[0]) and torch.equal(hidden.bias, start[1]),
        "loss_first": losses[0],
        "loss_last": losses[-1],
    }


def highway_style_init(module):
    if isinstance(module, nn.Linear):
        nn.init.constant_(module.bias, GATE_BIAS)


def broken(device):
    x, y = data(device)
    with seeded(0):
        model = network()
    model.apply(highway_style_init)  # every Linear, the ReLU layer included
    return train(model.to(device), x, y)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `relu(z)` is `z` for `z > 0` and `0` otherwise, and its derivative is 1 or 0 accordingly
# (PyTorch uses 0 at exactly 0). The gradient reaching the hidden layer's weights is the
# upstream gradient *times that derivative*, summed over the batch. With a bias of -3 and
# default weights (at most 0.5 in size, on four standardised inputs), every pre-activation in
# this batch is below zero, so every term of that sum is multiplied by 0: the hidden weights and
# biases get exactly zero gradient and never move. The output layer's weights see hidden
# activations that are all 0, so their gradient is 0 too; only the output bias learns, and it
# learns the mean of the targets. That is why the loss falls once and then stays at the targets'
# variance. The same dead state is reached from a healthy start when one oversized update (a
# learning rate spike, an outlier batch) pushes the biases far negative: the units then stay
# dead for the rest of the run, since nothing can push them back.
#
# ## The fix
# Keep ReLU layers' biases at zero (or PyTorch's default small uniform values) and reserve a
# negative bias for the gates it was meant for. A dead layer shows up in two cheap measurements:
# the fraction of ReLU outputs that are non-zero on a batch, and whether each layer's gradient
# is non-zero after the first backward. The check recomputes the hidden layer's first gradient
# by hand from the starting weights, `((2/N)(ŷ - y) W₂ ⊙ 1[z > 0])ᵀ x`, and requires it to be
# non-zero and the loss to fall by 95%.


# %%
def fixed(device):
    x, y = data(device)
    with seeded(0):
        model = network()
    nn.init.zeros_(model[0].bias)  # ReLU layer: start at 0, not "closed"
    return train(model.to(device), x, y)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The CS231n notes ("Commonly used activation functions") describe ReLU units that "die": once a
# unit's weights put it below zero for every input, its gradient is zero from then on, and a
# learning rate set too high can kill a large fraction of a network that way.
# facebookresearch/dlrm#358 is the same failure in a real model's initialisation: the bias could
# be initialised to a large negative value, the input to the ReLU was negative, and no training
# happened because every derivative after it was zero (the downstream report is
# pytorch/benchmark#1927); the fix initialises biases to zero. torch-audit has two runtime rules
# for it, TA103 "Dead Units (Zero Grads)" and TA105 "Activation Collapse (Dead Neurons)", whose
# remedies are the ones above: check the initialisation, lower the learning rate, or use an
# activation with a non-zero slope for negative inputs (LeakyReLU). Highway Networks (Srivastava
# et al., 2015) is where the negative gate bias comes from. ReLU's derivative has been 0 for
# negative inputs in every torch release.

# %% [markdown]
# ## How the harness checks it
# A first layer whose weight gradient is exactly zero is not always dead. With a batch of blank
# inputs (all zeros, a broken data loader), `dL/dW = (...)ᵀ x` is zero because `x` is, while the
# ReLUs are alive (their pre-activation is the bias, positive for most of them). That is a data
# bug; the symptom asks for the ReLUs themselves to be silent, and does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """No ReLU is active on the batch, the hidden layer's first weight gradient is exactly
    zero, and after training its weights and biases are bit-for-bit the initial ones."""
    if run.error is not None:
        return False
    v = run.value
    return v["active_fraction"] == 0.0 and bool((v["first_hidden_grad"] == 0).all()) and v["hidden_unchanged"]


def near_miss(device):
    """Healthy ReLUs, default init, but a batch of blank inputs."""
    x, y = data(device)
    with seeded(0):
        model = network()
    return train(model.to(device), torch.zeros_like(x), y)


def check(run, device):
    """The first gradient of the hidden weights equals the one written out by hand from the
    starting weights and is non-zero; the loss fell by at least 95%."""
    assert run.error is None, f"raised {run.error!r}"
    x, y = data(device)
    with seeded(0):
        start = network()
    nn.init.zeros_(start[0].bias)
    start = start.to(device)
    with torch.no_grad():
        z = x @ start[0].weight.T + start[0].bias
        out = z.clamp(min=0) @ start[2].weight.T + start[2].bias
        upstream = (2 / out.numel()) * (out - y) @ start[2].weight  # dL/d relu(z)
        by_hand = (upstream * (z > 0)).T @ x
    torch.testing.assert_close(run.value["first_hidden_grad"], by_hand, rtol=1e-5, atol=1e-5)
    assert by_hand.abs().sum() > 0, "the hidden layer got no gradient"
    assert run.value["loss_last"] < 0.05 * run.value["loss_first"], (run.value["loss_first"], run.value["loss_last"])


def stable(value):
    """The ReLU activity, whether the hidden layer moved and got a gradient, and the losses to 2
    significant digits; the gradient's float digits are not kept."""
    return {
        "active_fraction": round(value["active_fraction"], 2),
        "first_hidden_grad_zero": bool((value["first_hidden_grad"] == 0).all()),
        "hidden_unchanged": value["hidden_unchanged"],
        "loss_first": float(f"{value['loss_first']:.2g}"),
        "loss_last": float(f"{value['loss_last']:.2g}"),
    }


CASE = Case(
    id="dead-relu-from-bias",
    title="Every ReLU dead from the first step",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The hidden layer never changes: every ReLU outputs 0, so its gradient is exactly 0.",
    # ReLU's derivative is 0 for negative inputs by definition; no release changes it.
    affects=(Affects("*", reason="relu's derivative is 0 below zero; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="CS231n: Neural Networks Part 1, Commonly used activation functions (ReLU units can die)",
            url="https://cs231n.github.io/neural-networks-1/",
        ),
        Source(
            title="facebookresearch/dlrm#358: bias initialized to a large negative value, a negative input to ReLU prevents any training",
            url="https://github.com/facebookresearch/dlrm/pull/358",
        ),
        Source(
            title="torch-audit (RULES.md), rules TA103 Dead Units (Zero Grads) and TA105 Activation Collapse (Dead Neurons)",
            url="https://github.com/RMalkiv/torch-audit",
        ),
    ),
    tags=("training", "relu", "initialization", "dead_units"),
    references=(
        "https://github.com/pytorch/benchmark/pull/1927",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.ReLU.html",
        "https://arxiv.org/abs/1505.00387",  # Highway Networks: negative gate bias at init
    ),
)
