# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `F.interpolate` reads one C×H×W image as a batch of 1-D signals
#
# You have a single image as a `C×H×W` tensor (3 channels, 4 rows, 6 columns) and want it at
# twice the size, so you write `F.interpolate(image, size=(8, 12))`. It raises
# `ValueError: Input and output must have the same number of spatial dimensions, but got input
# with spatial dimensions of [6] and output size of (8, 12)`. The message names a single spatial
# dimension of 6, although the image plainly has two. Try `size=12` instead and the error is
# gone, but the result has shape `3×4×12`: only the width changed, and each row was stretched on
# its own. `scale_factor=2` does the same thing, and also raises no error.

# %%
import re

import torch
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A 3-channel 4×6 "image" with distinct pixel values, resized the way one would resize an image,
# in both spellings: one number (`size=12`) and two (`size=(8, 12)`). The values are there so
# the silent form can be checked by value. The run keeps what each call gave: a tensor, or the
# error.


# %%
def _image(device):
    return torch.arange(3 * 4 * 6, dtype=torch.float32, device=device).reshape(3, 4, 6)  # C, H, W


def _resize(image, **kwargs):
    """F.interpolate(image, **kwargs), or the ValueError it raised: both are observations."""
    try:
        return F.interpolate(image, **kwargs)
    except ValueError as exc:
        return exc


def broken(device):
    image = _image(device)
    return {
        "size=12": _resize(image, size=12),  # meant: the image at 12×12
        "size=(8, 12)": _resize(image, size=(8, 12)),  # meant: H 4 -> 8 and W 6 -> 12
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    image = _image("cpu")
    # scale_factor=2 is the same silent form as size=12: the width alone doubles.
    torch.testing.assert_close(F.interpolate(image, scale_factor=2), broken("cpu")["size=12"])
    # bilinear is a 2-D mode: it refuses 3-D input outright, and names the real problem.
    print(observe(F.interpolate, image, scale_factor=2, mode="bilinear"))  # NotImplementedError

# %% [markdown]
# ## Why
# `F.interpolate` takes a *batch*: `N×C×L` (1-D), `N×C×H×W` (2-D) or `N×C×D×H×W` (3-D). It has no
# separate "one image" form. It counts the dimensions, takes the first two as batch and channels,
# and calls everything after them spatial. A `C×H×W` image therefore reads as `N=C` samples with
# `C=H` channels, each a 1-D signal of length `W`. There is one spatial axis, so a two-number
# `size` fails the length check and raises the `ValueError`. A single number (or a single scale
# factor) is expanded to one value per spatial axis, which here means the width alone, and the 1-D
# nearest kernel runs with no complaint. The call cannot tell an unbatched image from a real batch
# of 1-D signals, since both have three dimensions, so it has nothing to warn about. The 2-D-only
# modes (`bilinear`, `bicubic`) do check that the input is 4-D and raise `NotImplementedError` for
# 3-D input (after the `size` check, so a two-number `size` still gets the `ValueError` first).
# The default `nearest`, and `linear`, `area` and `nearest-exact`, accept 3-D input and produce
# the wrong shape.
#
# ## The fix
# Give the image the batch axis it lacks, resize, and take the axis off again:
# `F.interpolate(image.unsqueeze(0), size=(H, W)).squeeze(0)`. A `1×C×H×W` tensor has two
# spatial axes, so `size=(8, 12)` means height and width, and `size=12` means 12 for both.
# For a batch of images, pass the `N×C×H×W` batch as it is. (torchvision's `resize` accepts
# `C×H×W` directly and adds the batch axis itself.)


# %%
def fixed(device):
    image = _image(device)
    # 1×C×H×W in, C×H×W out: with the batch axis, `size` names H and W.
    return {
        "size=12": F.interpolate(image.unsqueeze(0), size=12).squeeze(0),
        "size=(8, 12)": F.interpolate(image.unsqueeze(0), size=(8, 12)).squeeze(0),
    }


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's section on `F.interpolate` explains that the function works on whole batches
# of images. Resizing a single image directly raises an error, it says, because `size` then
# takes one integer that scales `W` alone, and the channel count of 3 is read as the batch
# size. It follows with the call to use for resizing `H` and `W` (that code was an image and is
# not in our copy of the text). It links the `F.interpolate` documentation, which reads the
# input as `mini-batch x channels x [optional depth] x [optional height] x width`.
#
# Upstream, pytorch/pytorch#63845 (2021) reports the same mistake with a 3×244×395 image. The
# message at the time was `size shape must match input shape. Input is 1D, size is 2`, and the
# reporter found it hard to follow. PR #66417 ("Updated error message for
# nn.functional.interpolate", which fixes #63845) changed it, and tracebacks from 2022 onwards
# show today's wording, quoted above, which asks for the `(N, C, d1, d2, ...,dK)` layout. The
# symptom predicate accepts both wordings. The error for 3-D input with `bilinear` was
# made clearer by PR #113459. The length check on a tuple `size` appears in the 1.6-era
# `F.interpolate` (the code that also carries the 1.6.0 `recompute_scale_factor` warning).
# Copies of the 1.4-era code, kept in compatibility wrappers for old torch, check the length of
# a tuple `scale_factor` but not of `size`, so there a mismatched `size` went on to fail in some
# other way, in the kernel call. Whether 1.5 already had the check was not pinned down, which
# is why `affects` starts at 1.6. The silent form, where a lone `size` or `scale_factor` resizes the
# width only, follows from the `N×C×...` convention and has been there since `F.interpolate`
# first appeared (0.4.1); the symptom asks for both forms, so the range is the one where both
# show.

# %% [markdown]
# ## How the harness checks it
#
# Look-alikes that are not this pitfall: a channels-last `H×W×C` image (as PIL or OpenCV give
# it) given its batch axis resizes its rows and columns as "H" and "W", the wrong shape for
# another reason; and `size` passed together with `scale_factor` raises a ValueError about the
# arguments, not the dimensions.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S2


def symptom(run):
    """Both forms: one number for `size` stretches each row on its own (3×4×12, every column
    repeated, written by hand with repeat_interleave), and two numbers raise a ValueError about
    the number of spatial dimensions (the wording before late 2021 was 'size shape must match
    input shape')."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    wide, error = run.value.get("size=12"), run.value.get("size=(8, 12)")
    width_only = (
        isinstance(wide, torch.Tensor)
        and tuple(wide.shape) == (3, 4, 12)
        and torch.equal(wide.cpu(), _image("cpu").repeat_interleave(2, dim=-1))
    )
    refused = (
        isinstance(error, ValueError)
        and re.search(r"spatial dimensions|size shape must match input shape", str(error), re.I) is not None
    )
    return width_only and refused


def near_miss(device):
    hwc = _image(device).permute(1, 2, 0)  # 4×6×3
    return {
        "size=12": _resize(hwc.unsqueeze(0), size=12).squeeze(0),  # 4×12×12
        "size=(8, 12)": _resize(_image(device).unsqueeze(0), size=(8, 12), scale_factor=2),
    }


def check(run, device):
    """Nearest-neighbour with integer factors turns every pixel into a block: repeat each row,
    then each column (×3 and ×2 for 12×12, ×2 and ×2 for 8×12), built with repeat_interleave."""
    image = _image(device)
    blocks = {"size=12": (3, 2), "size=(8, 12)": (2, 2)}
    for key, (rows, cols) in blocks.items():
        value = run.value[key]
        assert isinstance(value, torch.Tensor), f"{key}: {value!r}"
        expected = image.repeat_interleave(rows, dim=1).repeat_interleave(cols, dim=2)
        torch.testing.assert_close(value, expected)


CASE = Case(
    id="interpolate-3d-input",
    title="F.interpolate reads one C×H×W image as a batch of 1-D signals",
    kind="error",
    symptom_category="wrong-shape",
    symptom_line="Resizing one C×H×W image raises that the input and output spatial dimensions differ.",
    star=True,  # a pitfall the source posts single out
    # From 1.13.1 on the matrix observes both forms. The length check on `size` that raises the
    # ValueError is in the 1.6-era code of F.interpolate; in 1.4 it was missing (see "Where it
    # comes from"). No release has changed the N×C×spatial reading of the input. Both forms show
    # on every release and device in the range, so one predicate checks both (Affects.form is for
    # forms that differ between releases or devices).
    affects=(
        Affects(
            ">=1.6",
            since="the tuple-size length check is in the 1.6-era F.interpolate code "
            "(it carries the 1.6.0 recompute_scale_factor warning); 1.4-era copies lack it",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S2.at("section 'F.interpolate的问题' (the problem with F.interpolate)"),),
    tags=("shapes", "interpolate", "batch_dim", "image"),
    references=(
        "https://github.com/pytorch/pytorch/issues/63845",  # a 3×244×395 image, the old message
        "https://github.com/pytorch/pytorch/pull/66417",  # the message reworded for #63845
        "https://github.com/pytorch/pytorch/pull/113459",  # clearer error: 3-D input, bilinear
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.interpolate.html",
    ),
)
