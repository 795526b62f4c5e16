# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `ToPILImage` on a float64 tensor (old torchvision)
#
# You normalise an image in NumPy, `arr / 255.0`, which quietly makes it float64. `ToTensor()`
# turns it into a float64 tensor without a word, and the first time you want to look at it,
# `ToPILImage()` fails: `TypeError: Input type float64 is not supported`. The same pipeline on a
# float32 tensor works, so the cure people found was a forced `.float()` before the conversion.
# torchvision 0.8 (with torch 1.7) made `ToPILImage` accept every floating dtype, so today the
# float64 tensor converts too.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# An RGB image's bytes, 4x4, every value a multiple of 5: the ground truth of the round trip.
PIXELS = (np.arange(48, dtype=np.uint8) * 5).reshape(4, 4, 3)


def float_image(device):
    """The image as NumPy code usually has it after scaling: `uint8 / 255.0` is float64, HWC.
    `ToTensor` keeps the float64 (it divides only uint8 input by 255) and makes it CHW."""
    from torchvision import transforms

    scaled = PIXELS / 255.0
    return transforms.ToTensor()(scaled).to(device)


def as_observed(image):
    """A PIL image as data: its mode and its bytes (HWC uint8)."""
    return {"mode": image.mode, "pixels": torch.from_numpy(np.array(image))}


# %% [markdown]
# ## The broken code
# The float64 tensor goes to `ToPILImage` as it is.


# %%
def broken(device):
    from torchvision import transforms

    image = float_image(device)
    assert image.dtype == torch.float64  # the case's premise: ToTensor kept NumPy's float64
    return as_observed(transforms.ToPILImage()(image))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# PIL stores pixels as bytes (or as 32-bit integers or floats in a few single-band modes).
# It has no mode for 64-bit floats. `ToPILImage` bridges the gap: a floating tensor, taken to be
# in [0, 1], is multiplied by 255 and cast to `uint8`, and the byte array then picks a mode
# (`RGB` for three channels). Up to torchvision 0.7 that scaling step was guarded by
# `isinstance(pic, torch.FloatTensor)`, which is true for float32 CPU tensors only. A float64
# tensor skipped the scaling, arrived at the mode table still as float64, matched no mode,
# and raised. Hence the forced `.float()` in the source: it is not about precision, it only
# makes the tensor take the branch that converts to bytes.
#
# torchvision 0.8 changed the test to `pic.is_floating_point()`, so float16/32/64 tensors
# all convert. The NumPy path lagged behind: a float64 *array* given directly to
# `ToPILImage` was refused until torchvision 0.17 (torch 2.2), when the two paths were aligned
# (pytorch/vision#8090, #8097). Still refused today: integer input other than `uint8` (apart
# from single-band `int16`/`int32`, pytorch/vision#9043), and `mode="F"` with float64 input,
# since PIL's `F` is 32-bit.
#
# ## The fix
# Convert deliberately before the PIL boundary: `.float()` (float32, as the source did) or,
# clearer about the scale, bytes yourself: `(t * 255).round().to(torch.uint8)`. Better still,
# keep float64 out of the pipeline: `arr.astype(np.float32) / 255` or a `uint8` image into
# `ToTensor`.


# %%
def fixed(device):
    from torchvision import transforms

    return as_observed(transforms.ToPILImage()(float_image(device).float()))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, in the part on `torchvision.transforms`, run `ToTensor()` on
# `np.random.rand(100, 100, 3)` (float64) and convert back with `ToPILImage()(t_out.float())`,
# marking the `.float()` as a forced type conversion; the catalogue row reads it as the
# workaround for this refusal.
#
# The versions come from torchvision's own wheels, read and not run: 0.2.1 to 0.7.0 scale only
# `torch.FloatTensor` input and raise `TypeError('Input type float64 is not supported')` for a
# float64 three-channel image. 0.8.0, whose wheel requires torch 1.7.0, tests
# `is_floating_point()`. The float64 *array* path was read the same way: refused in 0.14.1 to
# 0.16.2, converted from 0.17.2, matching pytorch/vision#8097 (November 2023).
#
# The case is *historical*: `affects` is `<1.7`, below every torch this project installs, so the
# symptom is never expected here. With torchvision 0.29.1 on torch 2.14.1 (CPU) it was run: the
# float64 tensor converts to the right `RGB` image, no error, so the outcome is `unverified`: the
# fix's check accepts the broken result too. In this project's default environment (torch 2.13.0,
# a CPU build) PyPI's torchvision cannot be imported, and the case is `unverified` for that
# reason.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike that is not this pitfall: integer tensors are still refused, with the same
# `TypeError` and the same words, naming `int64` (pytorch/vision#9043). Their values are not in
# [0, 1], and casting to float would scale them by 255 wrongly; the symptom must not take them
# for the float64 case.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The old refusal: a TypeError saying the float64 input type is not supported."""
    return run.raised(TypeError, r"input type float64 is not supported")


def near_miss(device):
    from torchvision import transforms

    image = torch.from_numpy(PIXELS.astype(np.int64)).permute(2, 0, 1).to(device)
    return as_observed(transforms.ToPILImage()(image))


def check(run, device):
    """A three-channel RGB image whose bytes are the original PIXELS: the round trip
    bytes -> /255 -> PIL gives back exactly what went in. On today's torchvision the broken
    call returns the same image, so this check cannot tell the two apart here."""
    assert run.value["mode"] == "RGB", run.value["mode"]
    torch.testing.assert_close(run.value["pixels"], torch.from_numpy(PIXELS))


CASE = Case(
    id="topilimage-float64",
    title="ToPILImage on a float64 tensor (old torchvision)",
    kind="historical",
    symptom_category="error",
    symptom_line="ToPILImage on a float64 tensor raised TypeError: Input type float64 is not supported.",
    # Read from torchvision's wheels, not run: up to 0.7.0 (which requires torch==1.6.0)
    # to_pil_image scaled only `torch.FloatTensor` (float32) to bytes, so a float64 tensor
    # reached the mode table as float64 and was refused. 0.8.0 (torch==1.7.0) tests
    # `pic.is_floating_point()` instead. No lower bound known: 0.2.1 already refuses it.
    affects="<1.7",
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section on torchvision.transforms: ToTensor() of np.random.rand(100, 100, 3), "
            "then ToPILImage()(t_out.float()) with the cast marked as forced"
        ),
    ),
    tags=("data", "torchvision", "transforms", "PIL", "float64"),
    references=(
        "https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.ToPILImage.html",
        "https://github.com/pytorch/vision/issues/8090",  # float ndarray vs float tensor in to_pil_image
        "https://github.com/pytorch/vision/pull/8097",  # the ndarray path aligned (torchvision 0.17)
        "https://github.com/pytorch/vision/issues/9043",  # int64/int32 input: still refused
    ),
    requires=("torchvision",),
)
