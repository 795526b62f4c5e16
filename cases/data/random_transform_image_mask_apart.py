# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A random flip drawn separately for the image and its mask
#
# A segmentation dataset augments its samples with a random horizontal flip, and applies the
# same transform function to the image and to its mask. Each call flips with probability 0.5,
# so about half the time exactly one of the two is flipped: the mask then labels the mirror
# image of the picture it comes with. Training runs, the loss goes down more slowly than it
# should, and the model learns from labels that are wrong on about half of the samples.

# %%
import torch

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A random flip written with torch alone, the way a transform class draws its decision: one
# `torch.rand` per call. 16 samples of a 4 × 6 "image" with its mask (the pixels above 0); the
# transform is called once for the image and once for the mask. The function reports, per
# sample, whether the mask still matches its image and whether it matches the image's mirror.

# %%
SAMPLES = 16


def random_hflip(t, p=0.5):
    """Flip the last dimension with probability p: a new draw on every call."""
    return torch.flip(t, dims=[-1]) if torch.rand(()) < p else t


def samples(device):
    g = torch.Generator().manual_seed(0)
    images = torch.randn(SAMPLES, 4, 6, generator=g).to(device)
    return images, (images > 0).long()


def report(images, masks, out_images, out_masks):
    aligned = [bool(torch.equal(m, (im > 0).long())) for im, m in zip(out_images, out_masks)]
    mirrored = [bool(torch.equal(m, (torch.flip(im, dims=[-1]) > 0).long())) for im, m in zip(out_images, out_masks)]
    flipped = sum(not torch.equal(a, b) for a, b in zip(images, out_images))
    return {"aligned": aligned, "mirrored": mirrored, "images_flipped": int(flipped)}


def broken(device):
    images, masks = samples(device)
    out_images, out_masks = [], []
    with seeded(0):
        for image, mask in zip(images, masks):
            out_images.append(random_hflip(image))  # one draw for the image
            out_masks.append(random_hflip(mask))  # another draw for the mask
    return report(images, masks, out_images, out_masks)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A random transform is a function with a hidden argument, the random draw. Calling it twice
# draws twice: the image and the mask each get an independent coin flip, and they disagree
# with probability 2 × 0.5 × 0.5 = 1/2. A random crop, rotation or scale drawn apart misaligns
# them in the same way, usually by less than a mirror and so even harder to see. Nothing
# raises: both tensors keep their shapes, and a glance at a few samples may well show
# matching ones. The same holds for any per-sample annotation that lives in image
# coordinates: boxes, keypoints, or a left/right label, which a flip must change too.
#
# ## The fix
# Draw the random parameters once per sample and apply the same transformation to
# everything that belongs together: here one decision flips both or neither. (torchvision's
# functional transforms, or its v2 transforms that take the image and the mask in one call,
# are built for this.) The check asks every mask to match its image, and at least one image
# to have been flipped, so the augmentation still does its job.


# %%
def random_hflip_pair(image, mask, p=0.5):
    """One draw, applied to both."""
    if torch.rand(()) < p:
        return torch.flip(image, dims=[-1]), torch.flip(mask, dims=[-1])
    return image, mask


def fixed(device):
    images, masks = samples(device)
    out_images, out_masks = [], []
    with seeded(0):
        for image, mask in zip(images, masks):
            image, mask = random_hflip_pair(image, mask)
            out_images.append(image)
            out_masks.append(mask)
    return report(images, masks, out_images, out_masks)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Joint transforms for an input and its target were among the first requests on torchvision:
# pytorch/vision#9 ("Random transforms for both input and target?"), and pytorch/vision#610,
# where the answer is to draw the parameters once and use the functional transforms on both.
# The same surprise is reported for MONAI's `ArrayDataset`, where the image and segmentation
# got different rotation angles (Project-MONAI/MONAI#1102). Karpathy's "A Recipe for Training
# Neural Networks" gives the label version as an example of a silent failure: flipping images
# left-right during augmentation without flipping their labels, which a network can still
# partly learn around. Nothing in PyTorch changes this; the matrix observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A mask that does not match its image is not always this pitfall: an off-by-one crop that
# shifts the mask by one pixel also misaligns it, but a shifted mask is not the image's mirror.
# The symptom asks for misaligned samples whose masks are exactly the mirror of the image: a
# flip applied to one of the two.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Some masks no longer match their images, and each of those matches the image's mirror:
    the flip was applied to one of the two."""
    if run.error is not None:
        return False
    misaligned = [i for i, ok in enumerate(run.value["aligned"]) if not ok]
    return bool(misaligned) and all(run.value["mirrored"][i] for i in misaligned)


def near_miss(device):
    """Every mask shifted by one pixel (an off-by-one crop): misaligned, not mirrored."""
    images, masks = samples(device)
    shifted = [torch.roll(m, shifts=1, dims=-1) for m in masks]
    return report(images, masks, list(images), shifted)


def check(run, device):
    """Every mask is its image's `> 0` pixels, computed again here, and at least one image
    was flipped (the augmentation is still on)."""
    assert run.error is None, f"raised {run.error!r}"
    assert all(run.value["aligned"]), f"masks misaligned: {run.value['aligned']}"
    assert run.value["images_flipped"] > 0, "no image was flipped"


CASE = Case(
    id="random-transform-image-mask-apart",
    title="A random flip drawn separately for the image and its mask",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="About half the masks are the mirror image of the picture they label.",
    # Two calls, two draws: no release of PyTorch is involved in the mechanism. Observed on
    # 2.13.0 with torch.rand and torch.flip (both present on every release of the matrix).
    affects=(Affects("*", reason="two calls draw twice; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/vision#9: Random transforms for both input and target?",
            url="https://github.com/pytorch/vision/issues/9",
        ),
        Source(
            title="pytorch/vision#610: torchvision transforms to take list of PIL images instead of a single PIL image",
            url="https://github.com/pytorch/vision/issues/610",
        ),
        Source(
            title="Andrej Karpathy, A Recipe for Training Neural Networks (2019): labels not flipped with the image",
            url="https://karpathy.github.io/2019/04/25/recipe/",
        ),
    ),
    tags=("data", "augmentation", "segmentation", "random"),
    references=("https://github.com/Project-MONAI/MONAI/issues/1102",),
)
