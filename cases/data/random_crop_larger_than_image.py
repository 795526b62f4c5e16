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
# (200, 200)` — or, with the torchvision of a few years ago, the baffling
# `ValueError: empty range for randrange() (0, -23, -23)`.

# %%
import torch

from harness import Case, observe, seeded
from harness.sources import S1

CASE = Case(
    id="random-crop-larger-than-image",
    title="RandomCrop(224) on an image smaller than 224",
    kind="error",
    # The behaviour belongs to torchvision, not torch: RandomCrop has always refused a crop
    # larger than its input, in three wordings (PIL era: random.randint's "empty range for
    # randrange()", as in S1; vision#2816, Oct 2020: "larger then input image size"; later:
    # "larger than input image size"). The code below feeds a tensor, which RandomCrop takes
    # since torchvision 0.8 (torch 1.7); whether 0.8.0 already had #2816 was not checked, so
    # the range starts at torch 1.8 (torchvision 0.9). Not run by this project: torchvision is
    # not installed here. Upper end open.
    affects=">=1.8",
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Troubleshooting', 2019-10-24: RandomSizeCrop(224) typed as "
                   "RandomCrop(224) in ImageNet preprocessing; ValueError: empty range for "
                   "randrange()"),),
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

# %% [markdown]
# ## The broken code
# A 3×200×200 image tensor (torchvision transforms take tensors as well as PIL images) through
# `RandomCrop(224)`. The crop position is drawn from torch's global RNG, hence `seeded`.

# %%
def broken(device):
    from torchvision import transforms

    image = torch.full((3, 200, 200), 0.5, device=device)
    with seeded(0):
        return transforms.RandomCrop(224)(image)


def symptom(run):
    """RandomCrop refuses: ValueError saying the crop is larger than the image."""
    return run.raised(ValueError, r"larger th[ae]n input image size|empty range for randrange")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `RandomCrop(size)` only *cuts*: it picks a top-left corner uniformly among the positions
# where a `size`×`size` window fits inside the image, and returns that window unchanged. For a
# 200-pixel side and a 224-pixel window there is no such position — the range of corners,
# `0 … 200 − 224`, is empty. Old torchvision drew the corner with `random.randint(0, h - th)`,
# so the failure surfaced as Python's "empty range for randrange() (0, -23, -23)", with no word
# about images; torchvision 0.8 added an explicit size check that names both sizes (vision#2809,
# #2816). Datasets with mixed image sizes hit it only when a small image comes up, which makes
# it look random (S1 saw it appear only under some loader settings).
# `RandomResizedCrop(size)` is a different transform: it picks a region *relative* to the
# image (a fraction of its area and an aspect ratio) and then resizes that region to `size`, so
# any input size gives a `size`×`size` output. `RandomCrop(size, pad_if_needed=True)` is the
# other way out, when a true crop (no rescaling) is wanted: it pads small images first.
#
# ## The fix
# Use the transform that was meant, `RandomResizedCrop(224)`. `antialias=True` is given
# explicitly: it is the default from torchvision 0.17, and earlier releases (0.15, 0.16) warn
# when a tensor is resized without it.

# %%
def fixed(device):
    from torchvision import transforms

    image = torch.full((3, 200, 200), 0.5, device=device)
    with seeded(0):
        out = transforms.RandomResizedCrop(224, antialias=True)(image)
    # By hand: any region of a constant image, resized by interpolation, is the same constant.
    torch.testing.assert_close(out, torch.full((3, 224, 224), 0.5, device=device))
    return out.shape


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes' troubleshooting diary (2019-10-24) records exactly this: in ImageNet
# preprocessing the first step, a random *sized* crop to 224, was typed as `RandomCrop(224)`;
# the data loader then failed with `ValueError: empty range for randrange() (0,-23, -23)` — a
# 200-pixel side against 224 — and, puzzlingly, only under some loader settings.
#
# Upstream, in torchvision: pytorch/vision#2809 (October 2020) asked for a better message after
# `RandomCrop(224)` on a 32×32 tensor failed inside `torch.randint` with "random_ expects 'from'
# to be less than 'to'", and pytorch/vision#2816 added the size check that raises
# `ValueError("Required crop size … is larger then input image size …")` (later spelled
# "than", and comparing `h < th` directly). For the tutorial's own `RandomCrop`,
# pytorch/tutorials#411 got the answer that asking for a crop larger than the image is not a
# bug. `RandomResizedCrop` gained its `antialias` argument in pytorch/vision#6193 (0.14, the
# release paired with torch 1.13, where this project's version matrix starts).
#
# **Not run here:** torchvision is not installed in this project's environment, so the case is
# `skipped` with that reason, on CPU as on CUDA; the code above was written from torchvision's
# source (`RandomCrop.get_params`, `RandomResizedCrop`) and has not been executed by this
# project.
