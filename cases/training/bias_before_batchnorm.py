# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A convolution bias that BatchNorm cancels
#
# A CNN block is written the way most tutorials write it, `nn.Conv2d(...)` followed by
# `nn.BatchNorm2d(...)`, and it trains fine. But log the gradients and one parameter of every
# block gets nothing: the convolution's bias has a gradient of about `1e-8`, rounding noise,
# step after step. Add 10 to it and the network's output does not change. `nn.Conv2d` has
# `bias=True` by default, and the BatchNorm right after it subtracts every channel's mean, bias
# included: the parameter is counted, stored, updated and checkpointed, and does nothing.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Conv, BatchNorm, ReLU, global pooling and a linear head, on a batch of 8 small images. After
# one backward pass the function compares the size of the convolution bias's gradient with the
# weight's, and measures how much the output moves when the bias is shifted by 10.


# %%
def images(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 3, 6, 6, generator=g)
    y = torch.randint(0, 2, (8,), generator=g)
    return x.to(device), y.to(device)


def cnn(conv_bias):
    return nn.Sequential(
        nn.Conv2d(3, 4, kernel_size=3, padding=1, bias=conv_bias),
        nn.BatchNorm2d(4),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        nn.Flatten(),
        nn.Linear(4, 2),
    )


def inspect(model, x, y):
    conv = model[0]
    logits = model(x)
    F.cross_entropy(logits, y).backward()
    found = {"n_params": sum(p.numel() for p in model.parameters()), "logits": logits.detach()}
    if conv.bias is None:
        return {**found, "has_conv_bias": False, "bias_grad_ratio": None, "shift_effect": None}
    with torch.no_grad():
        conv.bias += 10.0
        shifted = model(x)
        conv.bias -= 10.0
    return {
        **found,
        "has_conv_bias": True,
        "bias_grad_ratio": (conv.bias.grad.abs().max() / conv.weight.grad.abs().max()).item(),
        "shift_effect": (shifted - logits).abs().max().item(),
    }


def broken(device):
    x, y = images(device)
    with seeded(0):
        model = cnn(conv_bias=True).to(device)  # nn.Conv2d's default
    return inspect(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# In training mode BatchNorm normalises each channel with the batch's own statistics: `(z -
# mean(z)) / std(z)`, the mean and standard deviation taken over the batch and the spatial
# positions. A per-channel bias `b` adds the same constant to every element of its channel, so
# it raises `mean(z)` by exactly `b` and leaves `std(z)` unchanged: it cancels in the
# subtraction. The output does not depend on `b`, so the gradient with respect to `b` is zero;
# in floating point it comes out as rounding noise around `1e-8`. In eval mode the bias is
# folded into the running mean the same way. BatchNorm's own shift (`beta`) already plays the
# role of a bias after the normalisation. The wasted parameter costs memory, an addition per
# output element, and optimizer state; with weight decay it slowly drifts toward 0 for no
# reason, and Adam, which divides each update by the gradient's own running scale, turns the
# noise into steps about as large as the learning rate.
#
# ## The fix
# Build the convolution (or linear layer) that feeds a BatchNorm with `bias=False`, as
# torchvision's ResNet does. The model computes the same function with one parameter per channel
# fewer. The check rebuilds the forward pass by hand, convolution without a bias, batch
# normalisation from the batch's mean and biased variance, and compares the logits.


# %%
def fixed(device):
    x, y = images(device)
    with seeded(0):
        model = cnn(conv_bias=False).to(device)
    return inspect(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The PyTorch Performance Tuning Guide has a section "Disable bias for convolutions directly
# followed by a batch norm": BatchNorm's first step subtracts the mean, which cancels the
# convolution's bias, so the layer should be built with `bias=False`. The original BatchNorm
# paper (Ioffe and Szegedy, 2015) makes the same remark about the bias of the normalised layer.
# torch-audit flags it statically as rule TA400, "Redundant Bias before Norm". The PyTorch
# Forums thread "Convolution Layers no Bias with batchnorm" asks whether it is safe to drop the
# bias and is answered with the arithmetic above; projects fixed it in their own code, for
# example milesial/Pytorch-UNet#325. The cancellation is arithmetic and holds on every release.

# %% [markdown]
# ## How the harness checks it
# Not every bias before a BatchNorm is wasted. With a ReLU *between* the convolution and the
# BatchNorm (conv, ReLU, BN), the bias decides which values the ReLU clips before the statistics
# are taken, so it does change the output and gets a real gradient. The symptom asks for a
# gradient that is rounding noise and an output that ignores a shift of 10, and does not claim
# that order.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The convolution has a bias whose gradient is below 1e-5 of the weight's, and shifting it
    by 10 moves the logits by less than 1e-4."""
    if run.error is not None or not run.value["has_conv_bias"]:
        return False
    return run.value["bias_grad_ratio"] < 1e-5 and run.value["shift_effect"] < 1e-4


def near_miss(device):
    """Conv, ReLU, then BatchNorm: the bias acts before the ReLU, and matters."""
    x, y = images(device)
    with seeded(0):
        model = cnn(conv_bias=True)
    model = nn.Sequential(model[0], model[2], model[1], *model[3:]).to(device)
    return inspect(model, x, y)


def check(run, device):
    """No convolution bias and 4 parameters fewer than the broken block (3*4*9 + 2*4 + 4*2 + 2 =
    126, counted by hand); the logits equal conv -> batch norm (batch mean, biased variance) ->
    relu -> mean over the image -> linear, computed by hand from the same weights."""
    assert run.error is None, f"raised {run.error!r}"
    assert run.value["has_conv_bias"] is False, "the convolution still has a bias"
    assert run.value["n_params"] == 3 * 4 * 9 + 2 * 4 + 4 * 2 + 2, run.value["n_params"]
    x, _ = images(device)
    with seeded(0):
        model = cnn(conv_bias=False).to(device)
    conv, bn, head = model[0], model[1], model[5]
    with torch.no_grad():
        z = F.conv2d(x, conv.weight, padding=1)
        mean = z.mean(dim=(0, 2, 3), keepdim=True)
        var = z.var(dim=(0, 2, 3), unbiased=False, keepdim=True)
        normed = (z - mean) / torch.sqrt(var + bn.eps) * bn.weight.view(1, -1, 1, 1) + bn.bias.view(1, -1, 1, 1)
        by_hand = normed.clamp(min=0).mean(dim=(2, 3)) @ head.weight.T + head.bias
    # cuDNN may run the convolution in TF32 on a GPU (its default), so compare to 1e-3
    torch.testing.assert_close(run.value["logits"], by_hand, rtol=1e-3, atol=1e-3)


def stable(value):
    """Whether there is a bias, the parameter count, and the ratios as orders of magnitude."""
    kept = {"has_conv_bias": value["has_conv_bias"], "n_params": value["n_params"]}
    if value["has_conv_bias"]:
        kept["bias_grad_below_1e-5"] = value["bias_grad_ratio"] < 1e-5
        kept["shift_effect_below_1e-4"] = value["shift_effect"] < 1e-4
    return kept


CASE = Case(
    id="bias-before-batchnorm",
    title="A convolution bias that BatchNorm cancels",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The bias of a conv layer followed by BatchNorm gets a gradient of ~1e-8 and changing it changes nothing.",
    # BatchNorm's mean subtraction cancels a per-channel constant: arithmetic, on every release.
    affects=(Affects("*", reason="the batch mean subtraction cancels a per-channel bias; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch Performance Tuning Guide: Disable bias for convolutions directly followed by a batch norm",
            url="https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide.html",
        ),
        Source(
            title="torch-audit (RULES.md), rule TA400: Redundant Bias before Norm",
            url="https://github.com/RMalkiv/torch-audit",
        ),
        Source(
            title="PyTorch Forums: Convolution Layers no Bias with batchnorm",
            url="https://discuss.pytorch.org/t/convolution-layers-no-bias-with-batchnorm/144863",
        ),
    ),
    tags=("training", "batchnorm", "conv", "bias"),
    references=(
        "https://github.com/milesial/Pytorch-UNet/pull/325",
        "https://arxiv.org/abs/1502.03167",  # Batch Normalization, section 3.2: the bias can be ignored
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html",
    ),
)
