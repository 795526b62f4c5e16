# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `RandomCrop(224)` on an image smaller than 224
#
# An ImageNet training pipeline should start with `RandomResizedCrop(224)`: cut a random
# region, then resize it to 224×224. Type `RandomCrop(224)` instead and everything still looks
# fine on the first images, which are larger than 224. The first smaller image kills the data
# loader with `ValueError: Required crop size (224, 224) is larger than input image size
# (200, 200)`. With the torchvision of 2019–2020 it was the baffling
# `ValueError: empty range for randrange() (0, -23, -23)`.

# %%
import torch

from torch_pitfalls import observe, seeded

RGB = (128, 64, 32)


def small_image():
    """A 200x200 RGB image, as an ImageFolder dataset hands it over: PIL, one colour."""
    from PIL import Image

    return Image.new("RGB", (200, 200), RGB)


# %% [markdown]
# ## The broken code
# A 200×200 image through `RandomCrop(224)`, then `ToTensor`. The crop position is drawn from
# a global RNG (Python's `random` before torchvision 0.8, torch's since), hence `seeded`.


# %%
def broken(device):
    from torchvision import transforms

    crop = transforms.Compose([transforms.RandomCrop(224), transforms.ToTensor()])
    with seeded(0):
        return crop(small_image()).to(device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `RandomCrop(size)` only *cuts*: it picks a top-left corner uniformly among the positions
# where a `size`×`size` window fits inside the image, and returns that window unchanged. For a
# 200-pixel side and a 224-pixel window there is no such position: the range of corners,
# `0 … 200 − 224`, is empty. Old torchvision drew the corner with `random.randint(0, h - th)`,
# so the failure surfaced as Python's "empty range for randrange() (0, -23, -23)", with no word
# about images. torchvision 0.8 added an explicit size check that names both sizes (vision#2809,
# #2816). Datasets with mixed image sizes hit it only when a small image comes up, which makes
# it look random (S1 saw it appear only under some loader settings).
# `RandomResizedCrop(size)` is a different transform: it picks a region *relative* to the
# image (a fraction of its area and an aspect ratio) and then resizes that region to `size`, so
# any input size gives a `size`×`size` output. `RandomCrop(size, pad_if_needed=True)` is the
# other way out, when a true crop (no rescaling) is wanted: it pads small images first.
#
# ## The fix
# Use the transform that was meant, `RandomResizedCrop(224)`. `antialias=True` is given
# explicitly: it is the default from torchvision 0.17, and 0.15 and 0.16 warn when a *tensor*
# is resized without it (PIL images are always antialiased).


# %%
def fixed(device):
    from torchvision import transforms

    crop = transforms.Compose([transforms.RandomResizedCrop(224, antialias=True), transforms.ToTensor()])
    with seeded(0):
        return crop(small_image()).to(device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes' troubleshooting diary (2019-10-24) records exactly this. In ImageNet
# preprocessing the first step, a random *sized* crop to 224, was typed as `RandomCrop(224)`,
# and the data loader then failed with `ValueError: empty range for randrange() (0,-23, -23)`:
# a 200-pixel side against 224, and, puzzlingly, only under some loader settings.
#
# Upstream, in torchvision: pytorch/vision#2809 (October 2020) asked for a better message after
# `RandomCrop(224)` on a 32×32 tensor failed inside `torch.randint` with "random_ expects 'from'
# to be less than 'to'". pytorch/vision#2816 added the size check that raises
# `ValueError("Required crop size … is larger then input image size …")`, later spelled
# "than" (0.14.1 already does). Both wordings were read in torchvision's wheels: 0.2.1 to 0.7.0
# draw the corner with `random.randint` and no check, 0.8.0 (the release paired with torch
# 1.7.0) checks first. For the tutorial's own `RandomCrop`, pytorch/tutorials#411 got the answer
# that asking for a crop larger than the image is not a bug. `RandomResizedCrop` gained its
# `antialias` argument in pytorch/vision#6193 (0.14, the release paired with torch 1.13, where
# this project's version matrix starts).
#
# Run with torchvision 0.29.1 on torch 2.14.1 (CPU): `reproduced` in the `size-check` form. In
# this project's default environment (torch 2.13.0, a CPU build) PyPI's torchvision, a CUDA build,
# fails to import ("operator torchvision::nms does not exist"), so there the case cannot run; the
# version matrix runs it with each torch's own torchvision.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: `RandomCrop` raising a `ValueError` about the crop size for another reason, a
# size given as `(224, 224, 3)` (channels included). The image is fine and the message is
# about the argument, not about the image being too small.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """RandomCrop refuses with a ValueError: today's size check, or, in old torchvision,
    Python's `random.randint` over the empty range of corners."""
    if run.raised(ValueError, r"crop size .* is larger th[ae]n input image size"):
        return "size-check"
    if run.raised(ValueError, r"empty range (for|in) randrange"):
        return "randrange"
    return False


def near_miss(device):
    from torchvision import transforms

    crop = transforms.RandomCrop((224, 224, 3))
    with seeded(0):
        return transforms.ToTensor()(crop(small_image())).to(device)


def check(run, device):
    """224x224, and every pixel the image's one colour: any region of a one-colour image,
    resized, is that colour. By hand: value / 255 per channel, in RGB order."""
    expected = torch.tensor([v / 255 for v in RGB], device=device).view(3, 1, 1).expand(3, 224, 224)
    assert tuple(run.value.shape) == (3, 224, 224), tuple(run.value.shape)
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="random-crop-larger-than-image",
    title="RandomCrop(224) on an image smaller than 224",
    kind="error",
    symptom_category="error",
    symptom_line="RandomCrop(224) kills the loader at the first image smaller than 224.",
    # The behaviour belongs to torchvision; each torch release has its own torchvision (the
    # wheel pins torch exactly). RandomCrop has always refused a crop larger than its input,
    # in two wordings.
    affects=(
        # Read from the wheels of torchvision 0.2.1 to 0.7.0 (0.7.0 requires torch==1.6.0):
        # get_params draws the corner with random.randint(0, h - th), which raises on a negative
        # span. No lower bound known: 0.2.1 already does it.
        Affects("<1.7", form="randrange", reason="random.randint(0, h - th) over an empty range of corners"),
        # Observed on torchvision 0.29.1 (torch 2.14.1): an explicit size check. Upper end open.
        Affects(
            ">=1.7",
            form="size-check",
            since="torchvision 0.8.0, whose wheel requires torch==1.7.0, checks the size first "
            "(pytorch/vision#2816: 'larger then input image size'); read from the 0.7.0 "
            "and 0.8.0 wheels' transforms.py, not run here",
            reason="RandomCrop.get_params compares the crop with the image and raises",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Troubleshooting', 2019-10-24: RandomSizeCrop(224) typed as "
            "RandomCrop(224) in ImageNet preprocessing; ValueError: empty range for "
            "randrange()"
        ),
    ),
    tags=("data", "torchvision", "transforms", "augmentation"),
    references=(
        "https://github.com/pytorch/vision/issues/2809",  # ask for a clearer error
        "https://github.com/pytorch/vision/pull/2816",  # the size check and ValueError
        "https://github.com/pytorch/vision/pull/6193",  # antialias argument of RandomResizedCrop
        "https://github.com/pytorch/tutorials/issues/411",  # 'not a bug': crop larger than image
        "https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.RandomResizedCrop.html",
    ),
    requires=("torchvision",),
)
