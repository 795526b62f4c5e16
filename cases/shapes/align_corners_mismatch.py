# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Bilinear resizing with two different `align_corners`
#
# A segmentation or detection model was trained with features upsampled by
# `F.interpolate(..., mode="bilinear", align_corners=True)` (many repositories from the 0.3/0.4
# era set it, to keep the old behaviour). The deployment code, written later, calls
# `F.interpolate(..., mode="bilinear")` and leaves the option at its default. Both run, both
# return tensors of the right size; the inference features are shifted by a fraction of a pixel
# against what the model learned, and the accuracy quietly drops.

# %%
import numpy as np
import torch
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# One row of two feature values, 0 and 3, upsampled to four pixels: once as in training,
# once as in deployment.


# %%
def _feature(device):
    return torch.tensor([[[[0.0, 3.0]]]], device=device)  # N, C, H, W = 1, 1, 1, 2


def broken(device):
    feat = _feature(device)
    train = F.interpolate(feat, size=(1, 4), mode="bilinear", align_corners=True)
    infer = F.interpolate(feat, size=(1, 4), mode="bilinear")  # default: align_corners=False
    return train.flatten(), infer.flatten()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # [0, 1, 2, 3] against [0, 0.75, 2.25, 3]

# %% [markdown]
# ## Why
# Bilinear resizing has to decide where each output pixel sits on the input grid, and the two
# settings decide differently. With `align_corners=True` pixels are points, and the first and
# last points of input and output coincide: output `i` reads input position
# `i·(in-1)/(out-1)`, here `0, 1/3, 2/3, 1`, giving `[0, 1, 2, 3]`. With `align_corners=False`
# pixels are unit squares and the outer *edges* coincide: output `i` reads position
# `(i+0.5)·in/out - 0.5`, here `-0.25, 0.25, 0.75, 1.25` (clamped to the edge), giving
# `[0, 0.75, 2.25, 3]`. The interior pixels differ by 0.25, a quarter of the input step. On
# real sizes the two sets of sampling positions agree in the middle and drift apart towards the
# borders, by up to almost half an input pixel: after a ×8 upsampling of a 64-wide map that is
# about 3.4 output pixels (computed with the two formulas). TF1's
# `tf.image.resize_bilinear` as the source used it (defaults `align_corners=False,
# half_pixel_centers=False`) is a third convention: position `i·in/out`, here `0, 0.5, 1, 1.5`,
# giving `[0, 1.5, 3, 3]` (computed by hand from that formula; TensorFlow is not run here).
# Weights ported between frameworks, or between code paths, carry their convention with them.
#
# ## The fix
# Pick one convention and pass it explicitly everywhere the model resizes, through one helper
# or constant, so training, evaluation and export cannot drift apart.

# %%
ALIGN_CORNERS = False  # the PyTorch default; what matters is that there is only one


def resize(x, size):
    return F.interpolate(x, size=size, mode="bilinear", align_corners=ALIGN_CORNERS)


def fixed(device):
    feat = _feature(device)
    train = resize(feat, (1, 4)).flatten()
    infer = resize(feat, (1, 4)).flatten()
    return train, infer


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (a TensorFlow detector, 2019) had to upsample FPN maps of sizes 2, 3, 5 and
# 10, could not use the integer-factor `UpSampling2D`, and went through `tf.image.resize` and
# `tf.image.resize_bilinear`, which the author distrusted and which the colleague who left the
# project suspected of the collapse in AP. Reproducing that in TensorFlow is out of scope here;
# the mechanism that makes resizes disagree is the pixel convention shown above. In PyTorch the
# option appeared in 0.4.0, which also switched the default from the old corner-aligned
# behaviour to `False`; for years `F.interpolate` warned "Default upsampling behavior when
# mode=bilinear is changed to align_corners=False since 0.4.0" whenever the option was left
# unset (users of 0.4 met it, e.g. JiaRenChang/PSMNet#61); in pytorch/pytorch#42729 the
# maintainers trace the `None` default to that 0.3.1 compatibility. Torch 2.13.0 no longer warns
# (observed), so today nothing at all signals the mismatch; when the warning was removed was
# not found.

# %% [markdown]
# ## How the harness checks it
#
# Not every pair of resizes that disagree is this pitfall. Leave out `mode=` as well and
# `F.interpolate` falls back to its default `nearest`, which copies pixels (`[0, 0, 3, 3]`):
# also a mismatch with training, but of the resizing method, not of the pixel convention.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S3

# The two conventions, written out by hand from the formulas in "Why" below.
CORNERS = [0.0, 1.0, 2.0, 3.0]  # align_corners=True: positions i·(in-1)/(out-1)


HALF_PIXEL = [0.0, 0.75, 2.25, 3.0]  # align_corners=False: positions (i+0.5)·in/out - 0.5


def symptom(run):
    """Training saw the corner-aligned resize and deployment the half-pixel one: the same
    feature, two different rows of pixels."""
    if run.error is not None:
        return False
    train, infer = (v.cpu() for v in run.value)
    return torch.allclose(train, torch.tensor(CORNERS)) and torch.allclose(infer, torch.tensor(HALF_PIXEL))


def near_miss(device):
    feat = _feature(device)
    train = F.interpolate(feat, size=(1, 4), mode="bilinear", align_corners=True)
    infer = F.interpolate(feat, size=(1, 4))  # mode="nearest"
    return train.flatten(), infer.flatten()


def check(run, device):
    """Both paths give NumPy's linear interpolation of [0, 3] at the half-pixel positions
    (np.interp, not torch), and they agree exactly."""
    train, infer = run.value
    positions = (np.arange(4) + 0.5) * 2 / 4 - 0.5
    reference = np.interp(positions, [0.0, 1.0], [0.0, 3.0])  # clamps outside [0, 1]
    expected = torch.tensor(reference, dtype=torch.float32, device=device)
    torch.testing.assert_close(train, expected)
    torch.testing.assert_close(infer, train, rtol=0, atol=0)


CASE = Case(
    id="align-corners-mismatch",
    title="Bilinear resizing with two different align_corners",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Upsampled features are shifted because training and deployment used different align_corners.",
    # align_corners exists since 0.4.0 (which also changed the default from the old
    # corner-aligned behaviour to False); F.interpolate, used here, since 0.4.1. From 1.13.1 on
    # the matrix observes it (2.13.0 no longer warns when the option is left unset).
    affects=(
        Affects(
            ">=0.4.1",
            since="F.interpolate first shipped in 0.4.1 (0.4.0 had added align_corners "
            "to F.upsample and made False the default)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S3.at("section 2.1 (upsampling): tf.image.resize / resize_bilinear in the FPN"),),
    tags=("shapes", "interpolate", "align_corners", "upsampling", "tensorflow"),
    references=(
        "https://pytorch.org/docs/1.10/generated/torch.nn.functional.interpolate.html",
        "https://discuss.pytorch.org/t/what-we-should-use-align-corners-false/22663",
        "https://github.com/pytorch/pytorch/issues/42729",  # the None default: 0.3.1 compatibility
        "https://github.com/JiaRenChang/PSMNet/issues/61",  # the 0.4 default-change warning, in the wild
        "https://tensorflow.org/versions/r1.15/api_docs/python/tf/image/resize_bilinear",
    ),
)
