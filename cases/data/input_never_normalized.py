# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Raw 0–255 pixels fed to the model
#
# The images are loaded as `uint8` arrays and converted with `.float()`, so the model sees
# pixel values from 0 to 255. The same model and learning rate that train smoothly in a
# tutorial now make the loss jump above `1e13` after one step and to `nan` a few steps later;
# only a learning rate tens of thousands of times smaller keeps it finite, and then it crawls.
# Nothing is wrong with the model: the inputs were never scaled.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# 64 "images" of 16 pixels, integers in 0..255. The target is a number in [-1, 1]: how much
# brighter the left half is than the right half. A linear model, plain SGD with learning rate
# 0.1, 50 full-batch steps; the function returns the loss before the first step and after the
# last one.

# %%
LR = 0.1
STEPS = 50


def pixels_and_targets(device):
    g = torch.Generator().manual_seed(0)
    pixels = torch.randint(0, 256, (64, 16), generator=g).float()  # what .float() gives
    target = (pixels[:, :8].mean(1, keepdim=True) - pixels[:, 8:].mean(1, keepdim=True)) / 255
    return pixels.to(device), target.to(device)


def fresh_model(device):
    with seeded(0):
        return nn.Linear(16, 1).to(device)


def train(device, inputs, target):
    model = fresh_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    with torch.no_grad():
        first_loss = F.mse_loss(model(inputs), target).item()
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(inputs), target).backward()
        opt.step()
    with torch.no_grad():
        final_loss = F.mse_loss(model(inputs), target).item()
    return {
        "input_range": (inputs.min().item(), inputs.max().item()),
        "first_loss": first_loss,
        "final_loss": final_loss,
        "weight": model.weight.detach(),
        "bias": model.bias.detach(),
    }


def broken(device):
    pixels, target = pixels_and_targets(device)
    return train(device, pixels, target)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# For a linear layer the gradient of each weight is proportional to its input, so how far one
# step moves the output grows with the *square* of the inputs' scale. Gradient descent on this
# loss is stable only while the learning rate is below `2 / λ_max`, where `λ_max` is the
# largest eigenvalue of the loss's curvature matrix, `2 XᵀX / n` for a mean squared error. For
# pixels around 128 that eigenvalue is about 520 000, so any learning rate above about 4e-6
# overshoots and every step multiplies the error: the loss grows geometrically to `inf` and
# then `nan`. For inputs in [-1, 1] it is about 2, and 0.1 is a comfortable step. A learning
# rate small enough for the raw pixels would leave the bias (whose "input" is always 1)
# practically frozen: the scales are far apart from each other as well as from 1. The same
# happens with tabular features in very different units (an area in m² beside a count of
# rooms), where the largest-scale feature dictates the usable learning rate.
#
# ## The fix
# Scale the inputs once, in the data pipeline: divide pixels by 255 (what
# `torchvision.transforms.ToTensor` does), then center them, here to [-1, 1]; for general
# features, subtract the training set's per-feature mean and divide by its standard deviation.
# Use the same statistics at evaluation time. The check recomputes the final loss by hand
# from the returned weights and asks it to be a tenth of the first loss or less.


# %%
def normalize(pixels):
    return (pixels / 255.0 - 0.5) / 0.5  # 0..255 -> -1..1


def fixed(device):
    pixels, target = pixels_and_targets(device)
    return train(device, normalize(pixels), target)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The CS231n course notes ("Neural Networks Part 2: Setting up the Data and the Loss", section
# "Data Preprocessing") describe mean subtraction (centring every input dimension around zero)
# as the most common preprocessing, and normalization (bringing the dimensions to a similar
# scale) as the next; raw pixels are neither centred (their mean is near 128) nor of the scale
# the initialization and the learning rate assume. A question on Cross Validated, "Why
# normalize when all features are on the same scale?", reports the effect directly: a
# classifier reaching 85% accuracy on pixels divided by 255 stays at 10% on raw pixels. The
# torchvision `ToTensor` and `Normalize` transforms exist for exactly this step. The arithmetic
# does not depend on a release; the matrix observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A diverging loss alone is not this pitfall: normalized inputs with a learning rate far too
# large (10 here) also blow up. The symptom asks, besides a final loss that is not below the
# first one (or not finite), that the inputs fed to the model lie outside [-1, 1], in raw
# pixel range.

# %% tags=["hide-cell"]
import math

from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The inputs are raw (values far above 1) and training did not lower the loss: the final
    loss is not finite or not below the first one."""
    if run.error is not None:
        return False
    v = run.value
    diverged = not math.isfinite(v["final_loss"]) or v["final_loss"] >= v["first_loss"]
    return v["input_range"][1] > 1.0 and diverged


def near_miss(device):
    """Normalized inputs, but a learning rate of 10: the loss diverges for another reason."""
    pixels, target = pixels_and_targets(device)
    inputs = normalize(pixels)
    model = fresh_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=10.0)
    with torch.no_grad():
        first_loss = F.mse_loss(model(inputs), target).item()
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(inputs), target).backward()
        opt.step()
    with torch.no_grad():
        final_loss = F.mse_loss(model(inputs), target).item()
    return {
        "input_range": (inputs.min().item(), inputs.max().item()),
        "first_loss": first_loss,
        "final_loss": final_loss,
        "weight": model.weight.detach(),
        "bias": model.bias.detach(),
    }


def check(run, device):
    """The final loss, recomputed by hand as the mean squared residual of the returned weights
    on the normalized pixels, matches the reported one and is at most a tenth of the loss of
    the untrained model (also computed by hand)."""
    assert run.error is None, f"raised {run.error!r}"
    pixels, target = pixels_and_targets(device)
    inputs = normalize(pixels)
    w, b = run.value["weight"], run.value["bias"]
    by_hand = ((inputs @ w.T + b - target) ** 2).mean().item()
    init = fresh_model(device)
    with torch.no_grad():
        first = ((inputs @ init.weight.T + init.bias - target) ** 2).mean().item()
    assert math.isfinite(by_hand), "the trained weights give a loss that is not finite"
    assert abs(by_hand - run.value["final_loss"]) <= 1e-5 + 1e-3 * by_hand, "the reported loss is not the weights' loss"
    assert by_hand <= first / 10, f"loss {by_hand} is not a tenth of {first}"


def stable(value):
    """Fifty steps of float arithmetic: the weights are not kept, only the input range, whether
    the loss diverged, and the final loss to 3 significant digits."""
    final = value["final_loss"]
    return {
        "input_range": list(value["input_range"]),
        "first_loss": float(f"{value['first_loss']:.3g}"),
        "final_loss": float(f"{final:.3g}") if math.isfinite(final) else str(final),
    }


CASE = Case(
    id="input-never-normalized",
    title="Raw 0–255 pixels fed to the model",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="With raw 0–255 inputs the loss explodes to inf and nan at a learning rate that trains normalized inputs well.",
    # Arithmetic of gradient descent, not an API behaviour: no release
    # is known to change it.
    affects=(Affects("*", reason="the stable step size scales with 1/|x|²; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="CS231n: Neural Networks Part 2, Setting up the Data and the Loss (Data Preprocessing)",
            url="http://cs231n.github.io/neural-networks-2/",
        ),
        Source(
            title="Cross Validated: Why normalize when all features are on the same scale?",
            url="https://stats.stackexchange.com/questions/372762/why-normalize-when-all-features-are-on-the-same-scale",
        ),
    ),
    tags=("data", "normalization", "preprocessing", "learning_rate"),
    references=(
        "https://pytorch.org/vision/stable/generated/torchvision.transforms.ToTensor.html",
        "https://pytorch.org/vision/stable/generated/torchvision.transforms.Normalize.html",
    ),
)
