# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A transposed convolution does not undo a strided one on odd sizes
#
# In a feature pyramid you downsample with a stride-2 convolution and upsample back with the
# "mirror" `ConvTranspose2d` (same kernel, stride and padding), expecting the original size.
# On a 10×10 map you get 9×9 back. Nothing fails at that line; the mismatch surfaces later, when
# the upsampled map is added to the 10×10 lateral branch, or worse, is silently cropped or
# padded to fit.

# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One channel, kernel 3, stride 2, padding 1: the usual "halve the size" convolution and its
# transposed twin.


# %%
def _down_up(device):
    with seeded(0):
        down = nn.Conv2d(1, 1, kernel_size=3, stride=2, padding=1, bias=False).to(device)
        up = nn.ConvTranspose2d(1, 1, kernel_size=3, stride=2, padding=1, bias=False).to(device)
    return down, up


def broken(device):
    down, up = _down_up(device)
    x = torch.ones(1, 1, 10, 10, device=device)
    with torch.no_grad():
        return up(down(x))  # 10 -> 5 -> 9


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    down, _ = _down_up("cpu")
    for size in (9, 10):  # two input sizes, one output size
        print(size, "->", tuple(down(torch.ones(1, 1, size, size)).shape[-2:]))

# %% [markdown]
# ## Why
# A strided convolution rounds down: its output size is `floor((n + 2p - k) / s) + 1`, so with
# `k=3, s=2, p=1` both 9 and 10 become 5. The transposed convolution has to pick one of the
# possible inputs and, by its formula `(n - 1)·s - 2p + k + output_padding`, picks the smallest:
# `4·2 - 2 + 3 = 9`. It has no way to know that this 5×5 map came from a 10×10 one. The same
# holds for TensorFlow's `'SAME'` padding, which is why `tf.nn.conv2d_transpose` makes you
# pass `output_shape`.
#
# ## The fix
# Tell the layer which size you want: `up(y, output_size=x.shape[-2:])`. PyTorch checks the
# request against the sizes that are possible (9 or 10 here) and sets the extra row and column
# for you; a constant `output_padding=1` in the constructor does the same, but only for inputs
# whose size is even. The result can be checked against the definition of the layer: a
# transposed convolution is the gradient of the matching convolution with respect to its input,
# and the gradient with respect to a 10×10 input is, by construction, 10×10.


# %%
def fixed(device):
    down, up = _down_up(device)
    x = torch.ones(1, 1, 10, 10, device=device)
    with torch.no_grad():
        return up(down(x), output_size=x.shape[-2:])


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (a TensorFlow detector, 2019) added an FPN to PeleeNet whose feature maps were
# 10, 5, 3 and 2 pixels wide. Keras' `UpSampling2D` only scales by integer factors, so the
# author tried `tf.image.resize_bilinear` and `tf.nn.conv2d_transpose`; the higher-level
# `tf.layers.conv2d_transpose` was dropped because it could not be given an output shape and
# produced sizes that did not match. This case reproduces the mechanism in PyTorch: halving by a
# strided convolution loses the information needed to go back, and the transposed layer needs
# the target size (`output_size`, or `output_padding`). The ConvTranspose2d documentation
# describes the layer as the gradient of Conv2d with respect to its input and notes that a
# strided Conv2d maps several input shapes to the same output shape, which is what
# `output_padding` resolves.

# %% [markdown]
# ## How the harness checks it
#
# Not every wrong size after a transposed convolution is this pitfall. A "mirror" layer that
# forgot the padding gives `(5 - 1)·2 + 3 = 11`: a mismatched layer, which `output_size` cannot
# repair (it only chooses between the sizes the layer can reach, here 11 and 12).

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S3


def symptom(run):
    """The round trip came back 9x9, the smallest size the transposed layer's formula allows
    for a 5x5 input: (5 - 1)·2 - 2·1 + 3 = 9, not the 10x10 that went in."""
    return isinstance(run.value, torch.Tensor) and tuple(run.value.shape[-2:]) == (9, 9)


def near_miss(device):
    down, _ = _down_up(device)
    with seeded(0):
        up = nn.ConvTranspose2d(1, 1, kernel_size=3, stride=2, bias=False).to(device)  # padding 0
    with torch.no_grad():
        return up(down(torch.ones(1, 1, 10, 10, device=device)))


def check(run, device):
    """The result is 10x10 and equals d/dx0 of <conv2d(x0, w), y> for a 10x10 x0 (autograd
    through a plain convolution with the same weights, not the transposed layer)."""
    down, up = _down_up(device)
    with torch.no_grad():
        y = down(torch.ones(1, 1, 10, 10, device=device))
    x0 = torch.zeros(1, 1, 10, 10, device=device, requires_grad=True)
    conv = F.conv2d(x0, up.weight.detach(), stride=2, padding=1)
    (adjoint,) = torch.autograd.grad(conv, x0, grad_outputs=y)
    assert tuple(run.value.shape[-2:]) == (10, 10), tuple(run.value.shape)
    torch.testing.assert_close(run.value, adjoint)


CASE = Case(
    id="conv-transpose-output-size",
    title="A transposed convolution does not undo a strided one on odd sizes",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="A transposed convolution gives back 9×9 where you expected the original 10×10.",
    # Shape arithmetic of the documented formula, unchanged as far as known: no known lower
    # bound ("*"); the matrix observes it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S3.at("section 2.1 (upsampling): feature maps of size 2, 3, 5, 10 and tf.nn.conv2d_transpose"),),
    tags=("shapes", "conv_transpose", "upsampling", "tensorflow"),
    references=("https://pytorch.org/docs/stable/generated/torch.nn.ConvTranspose2d.html",),
)
