# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A PIL-era transform pipeline given a tensor
#
# Your images are already tensors: `torchvision.io.read_image` gave you one, or the dataset
# keeps its pixels in an array and you wrapped it with `torch.from_numpy(...).permute(2, 0, 1)`.
# You pass it to the usual pipeline, `Compose([CenterCrop(32), ToTensor(), Normalize(...)])`,
# and it stops with `TypeError: pic should be PIL Image or ndarray. Got <class 'torch.Tensor'>`.
# With the torchvision of 2019–2020 it stopped one step earlier, inside `CenterCrop`, with the
# baffling `TypeError: cannot unpack non-iterable builtin_function_or_method object`.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# CIFAR-10's per-channel statistics, as in the source's pipeline.
MEAN, STD = (0.4914, 0.4822, 0.4465), (0.2023, 0.1994, 0.2010)
RGB = (200, 100, 50)


def image_tensor(device):
    """A 36x36 RGB image stored as a dataset stores it, HWC uint8 (a 2-pixel black border
    around one colour), turned into the CHW uint8 tensor that `read_image` would give."""
    hwc = np.zeros((36, 36, 3), dtype=np.uint8)
    hwc[2:34, 2:34] = RGB
    return torch.from_numpy(hwc).permute(2, 0, 1).to(device)


def pil_pipeline():
    """A test-time pipeline written for PIL images: crop, convert, normalize."""
    from torchvision import transforms

    return transforms.Compose(
        [
            transforms.CenterCrop(32),
            transforms.ToTensor(),
            transforms.Normalize(MEAN, STD),
        ]
    )


# %% [markdown]
# ## The broken code
# The image is already a tensor, and it goes straight into the PIL pipeline.


# %%
def broken(device):
    return pil_pipeline()(image_tensor(device))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# torchvision's transforms were written for PIL images, and two conventions come with them.
# A PIL image (and an array you would pass to `plt.imshow`) is height × width × channels, and
# its `.size` attribute is the tuple `(width, height)`. A torch image tensor is channels ×
# height × width, and its `.size` is a *method*. Before torchvision 0.8, `center_crop` read the
# image size with `w, h = img.size`; on a tensor that tries to unpack a bound method, hence the
# message about `builtin_function_or_method`, with no word about images. Other transforms
# checked the type first and said `img should be PIL Image`.
#
# torchvision 0.8 reimplemented most transforms on tensors (any `[..., H, W]` tensor, on any
# device), so `CenterCrop` now takes the tensor. `ToTensor` did not change: its job is the
# boundary, PIL image or HWC `ndarray` in, CHW float tensor in [0, 1] out. It permutes the
# axes and divides by 255, and it refuses anything that is already a tensor.
#
# The channel order is also why a tensor made by `torch.from_numpy(hwc_array)` without a
# `permute` goes wrong: every tensor transform and `ToPILImage` take dimension -3 as the
# channels, so an HWC image of width 36 is read as 36 channels ("pic should not have > 4
# channels"), or cropped and flipped along the wrong axes.
#
# ## The fix
# Convert at the boundary, once, in the direction the pipeline expects. For a PIL pipeline
# that means `ToPILImage()` first (it takes a CHW tensor or an HWC array) and `ToTensor()`
# last before the tensor-only steps such as `Normalize`. If the data is tensors to begin with,
# the other way is a tensor-only pipeline: drop `ToTensor` and use
# `ConvertImageDtype(torch.float32)` (or `v2.ToDtype(torch.float32, scale=True)`) instead.


# %%
def fixed(device):
    from torchvision import transforms

    pipeline = transforms.Compose([transforms.ToPILImage(), pil_pipeline()])
    return pipeline(image_tensor(device)).to(device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, in the part on `torchvision.transforms`, say the built-in transforms are meant
# for PIL images read from files. They note that a tensor input raised `TypeError: cannot
# unpack non-iterable builtin_function_or_method object`, that NumPy input needs NumPy
# operations too, and that PIL/`imshow` images are `[32, 32, 3]` while tensors are
# `[3, 32, 32]`, which is why `ToTensor` permutes.
#
# The old message was read from torchvision's own wheels, not run: from 0.2.1 to 0.7.0 (0.7.0
# requires torch 1.6.0), `functional.center_crop` begins by unpacking `img.size` with no type
# check. In 0.8.0, the release paired with torch 1.7.0, it reads the size through a helper that
# handles tensors. That release's notes announce transforms on tensors (batched, on GPU,
# scriptable). The design is pytorch/vision#1375, and the transform-by-transform checklist is
# pytorch/vision#2292, where `center_crop` is ticked. Python before 3.7 words the same failure
# "'builtin_function_or_method' object is not iterable"; the symptom accepts both.
#
# Today's form was observed with torchvision 0.29.1 on torch 2.14.1 (CPU). This project's default
# environment (torch 2.13.0, a CPU build) cannot import PyPI's torchvision, which is a CUDA build
# ("operator torchvision::nms does not exist", pytorch/pytorch#122494), so there the case is
# `unverified` (or an import error) until the version matrix, with each torch's matching
# torchvision, runs it.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: the same `TypeError` from `ToTensor` about another type, here pixels kept as
# nested Python lists. That input is neither PIL nor tensor, and converting it at the tensor
# boundary would not help; the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """Old torchvision: TypeError from unpacking a tensor's `.size` method. Today: ToTensor's
    TypeError naming a *tensor* as the input it cannot take."""
    if run.raised(
        TypeError,
        r"cannot unpack non-iterable builtin_function_or_method"
        r"|'builtin_function_or_method' object is not iterable",
    ):
        return "unpack"
    if run.raised(TypeError, r"pic should be PIL Image or ndarray\. Got <class 'torch\.Tensor'>"):
        return "tensor-refused"
    return False


def near_miss(device):
    from torchvision import transforms

    pixels = [[[200, 100, 50]] * 4] * 4  # 4x4 RGB as lists
    return transforms.ToTensor()(pixels)


def check(run, device):
    """The centre 32x32 of the image is one colour, so the output is that colour in every
    pixel, channel by channel in RGB order: (value / 255 - mean) / std, computed by hand."""
    expected = torch.tensor([(v / 255 - m) / s for v, m, s in zip(RGB, MEAN, STD)], dtype=torch.float32)
    assert tuple(run.value.shape) == (3, 32, 32), tuple(run.value.shape)
    torch.testing.assert_close(run.value.cpu(), expected.view(3, 1, 1).expand(3, 32, 32))


CASE = Case(
    id="transforms-expect-pil",
    title="A PIL-era transform pipeline given a tensor",
    kind="error",
    symptom_category="error",
    symptom_line="A transform pipeline given a tensor raises: pic should be PIL Image.",
    affects=(
        # The old form, read from the wheels of torchvision 0.2.1 to 0.7.0 (0.7.0 requires
        # torch==1.6.0): center_crop unpacks `img.size`, which is PIL's (width, height) tuple
        # but a method on a tensor. No lower bound known: 0.2.1 already does it.
        Affects(
            "<1.7", form="unpack", reason="CenterCrop reads img.size as PIL's (w, h); on a tensor .size is a method"
        ),
        # Today's form, observed on torchvision 0.29.1 (torch 2.14.1). Tensors pass the
        # geometric transforms since torchvision 0.8.0, and ToTensor still takes only PIL
        # images and arrays. Upper end open.
        Affects(
            ">=1.7",
            form="tensor-refused",
            since="torchvision 0.8.0 (its wheel requires torch==1.7.0) made CenterCrop accept "
            "tensors (pytorch/vision#2292); read from the 0.7.0 and 0.8.0 wheels' "
            "transforms/functional.py, not run here",
            reason="ToTensor converts a PIL image or an HWC ndarray, never a tensor",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section on torchvision.transforms: the built-in transforms target PIL images; "
            "a tensor input raises 'cannot unpack non-iterable builtin_function_or_method "
            "object'; PIL/imshow images are [32,32,3], tensors [3,32,32]"
        ),
    ),
    tags=("data", "torchvision", "transforms", "PIL", "channel_order"),
    references=(
        "https://github.com/pytorch/vision/issues/1375",  # RFC: transforms on tensors
        "https://github.com/pytorch/vision/issues/2292",  # unify tensor and PIL transforms
        "https://github.com/pytorch/vision/releases/tag/v0.8.0",
        "https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.ToTensor.html",
        "https://docs.pytorch.org/vision/stable/generated/torchvision.transforms.ToPILImage.html",
    ),
    requires=("torchvision",),
)
