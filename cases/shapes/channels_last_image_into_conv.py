# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An H×W×C image fed straight to `Conv2d`
#
# Images loaded with PIL, OpenCV, `imageio` or Matplotlib arrive as NumPy arrays of shape
# `height × width × channels`, stacked into `N × H × W × C` batches. You wrap the batch with
# `torch.from_numpy` and pass it to the first `nn.Conv2d(3, ...)` of your network. The forward
# pass stops with `Given groups=1, weight of size [8, 3, 3, 3], expected input[2, 6, 8, 3] to
# have 3 channels, but got 6 channels instead`. The number the error calls the channels is your
# image height. PyTorch convolutions read the second axis as the channels, and nothing in the
# conversion moved the colour axis there.

# %%
import numpy as np
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A batch of two 6×8 RGB images as a loader built on NumPy returns them (`uint8`, channels
# last), scaled to [0, 1] and given to a 3-channel convolution.

# %%
N, H, W, C, OUT = 2, 6, 8, 3, 8


def numpy_batch():
    """Two H×W RGB images, channels last, as PIL/OpenCV/imageio produce them."""
    return (np.arange(N * H * W * C) % 251).astype(np.uint8).reshape(N, H, W, C)


def make_conv(device):
    with seeded(0):
        return nn.Conv2d(C, OUT, kernel_size=3).to(device)


def broken(device):
    conv = make_conv(device)
    images = torch.from_numpy(numpy_batch()).to(device).float() / 255  # [N, H, W, C]
    return conv(images)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# PyTorch's convolution, pooling and normalisation layers use the "channels first" layout: a 2-D
# convolution expects `(N, C, H, W)`, or `(C, H, W)` for one unbatched image. A layer has no
# way to know which axis of a tensor is "colour". It takes axis 1 as the channels and the last
# two axes as the spatial ones, and `torch.from_numpy` keeps the array's axis order. Here axis 1
# is the height, 6, and the layer expects 3, so it raises. The check only catches the mistake
# because the height differs from the channel count. Layers without a channel count (pooling,
# `F.interpolate`) do no such check, and accept the HWC tensor while working on the wrong axes.
# This is the layout TensorFlow and Keras use by default (`channels_last`), so code and data
# ported from them meet it too. PyTorch's own `memory_format=torch.channels_last` does not
# change this: it reorders memory, but the shape stays `(N, C, H, W)`.
#
# ## The fix
# Move the channel axis with `permute`: `images.permute(0, 3, 1, 2)` for a batch,
# `image.permute(2, 0, 1)` for one image. `view` or `reshape` to the right shape would also run,
# but they scramble the pixels (see `view-instead-of-permute`). In a torchvision pipeline,
# `transforms.ToTensor()` (or `v2.ToImage()`) does the same conversion from a PIL image or an
# HWC array.


# %%
def fixed(device):
    conv = make_conv(device)
    images = torch.from_numpy(numpy_batch()).to(device).float() / 255
    return conv(images.permute(0, 3, 1, 2))  # [N, C, H, W]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# `nn.Conv2d`'s documentation gives the input shape as `(N, C_in, H, W)`, and torchvision's
# `ToTensor` documents that it converts an `H × W × C` PIL image or array into a `C × H × W`
# tensor. The error, with the image height or width where the channel count should be, is a
# frequent report on GitHub: LeeJunHyun/Image_Segmentation#29 (`input[1, 512, 512, 3]`, solved
# by transposing the data to `[3, 512, 512]`), aladdinpersson/Machine-Learning-Collection#59
# (`input[30, 416, 416, 3]`, answered with "permute the dimensions of your input tensor to fit
# (N, C_in, H, W)"), midasklr/facelandmarks#4 (`input[1, 361, 424, 3]`), and
# pytorch/pytorch#23019 (a `[1, 1, 1024, 1024, 3]` tensor, solved with `permute(0, 3, 1, 2)`).
# The layout is the convention of the convolution API and has not changed.

# %% [markdown]
# ## How the harness checks it
# The same "expected input ... to have 3 channels" error also comes from a correctly laid-out
# batch with the wrong number of channels: a grayscale `(N, 1, H, W)` batch given to an RGB
# model reports "but got 1 channels". There the layout is right and the data is wrong. The
# symptom requires the reported channel count to be the image height of an `(N, H, W, 3)`
# input. The fix's output is checked against the convolution written as a sum over the 3×3
# window, read directly from the channels-last array.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The convolution read the HWC batch's height as its channel count."""
    return run.raised(RuntimeError, rf"input\[{N}, {H}, {W}, {C}\] to have {C} channels, but got {H} channels")


def near_miss(device):
    conv = make_conv(device)
    gray = torch.from_numpy(numpy_batch()[..., :1]).to(device).float().permute(0, 3, 1, 2) / 255
    return conv(gray)  # (N, 1, H, W): right layout, one channel


def check(run, device):
    """out[n, o, i, j] = b[o] + sum over c, di, dj of weight[o, c, di, dj] * image[n, i+di,
    j+dj, c], with the image indexed in its original channels-last order, in float64."""
    conv = make_conv(device)
    w, b = conv.weight.detach().double(), conv.bias.detach().double()
    img = torch.from_numpy(numpy_batch()).to(device).double() / 255  # [N, H, W, C]
    out = b.view(1, OUT, 1, 1).expand(N, OUT, H - 2, W - 2).clone()
    for di in range(3):
        for dj in range(3):
            window = img[:, di : di + H - 2, dj : dj + W - 2, :]  # [N, H-2, W-2, C]
            out += torch.einsum("nhwc,oc->nohw", window, w[:, :, di, dj])
    # cuDNN may convolve in TF32 (torch.backends.cudnn.allow_tf32 is on by default): ~1e-3 relative
    tol = 1e-5 if torch.device(device).type == "cpu" else 2e-3
    torch.testing.assert_close(run.value, out.float(), rtol=tol, atol=tol)


CASE = Case(
    id="channels-last-image-into-conv",
    title="An H×W×C image fed straight to Conv2d",
    kind="error",
    symptom_category="error",
    symptom_line="Conv2d raises 'expected input[N, H, W, 3] to have 3 channels, but got H channels' on HWC images.",
    affects=(Affects("*", reason="nn.Conv2d takes (N, C, H, W); the layout is the API's convention"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: torch.nn.Conv2d (input shape (N, C_in, H, W))",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.Conv2d.html",
        ),
        Source(
            title="torchvision docs: ToTensor (H x W x C to C x H x W)",
            url="https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.ToTensor.html",
        ),
        Source(
            title="LeeJunHyun/Image_Segmentation#29: expected input[1, 512, 512, 3] to have 3 channels, but got 512",
            url="https://github.com/LeeJunHyun/Image_Segmentation/issues/29",
        ),
        Source(
            title="aladdinpersson/Machine-Learning-Collection#59: expected input[30, 416, 416, 3] to have 3 channels",
            url="https://github.com/aladdinpersson/Machine-Learning-Collection/issues/59",
        ),
    ),
    tags=("shapes", "conv", "image", "layout", "permute", "numpy"),
    references=(
        "https://github.com/midasklr/facelandmarks/issues/4",
        "https://github.com/pytorch/pytorch/issues/23019",
        "https://docs.pytorch.org/tutorials/intermediate/memory_format_tutorial.html",  # channels_last keeps NCHW shape
    ),
)
