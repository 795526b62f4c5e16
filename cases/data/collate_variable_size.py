# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # The default collate cannot batch images of different sizes
#
# Your dataset returns images as they come off the disk: one is 375×500, the next 500×375.
# Indexing the dataset works, a `DataLoader` with `batch_size=1` works, and the first real
# training loop stops at the first batch with `RuntimeError: stack expects each tensor to be
# equal size, but got [3, 4, 5] at entry 0 and [3, 5, 5] at entry 1` — raised from deep inside
# `torch/utils/data/_utils/collate.py`, far from the code that produced the sizes.

# %%
import torch
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

from torch_pitfalls import observe, seeded


class VariableSizeImages(Dataset):
    """Two 3-channel 'images', 4×5 and 5×5, filled with their index + 1 so they are told apart."""

    def __init__(self, device):
        self.device = device

    def __len__(self):
        return 2

    def __getitem__(self, i):
        return torch.full((3, 4 + i, 5), float(i + 1), device=self.device)


# %% [markdown]
# ## The broken code
# A map-style dataset whose two items differ in height, loaded in batches of two with the
# default `collate_fn` (and `num_workers=0`, so everything runs in this process).


# %%
def broken(device):
    loader = DataLoader(VariableSizeImages(device), batch_size=2)
    with seeded(0):  # iter(loader) draws a base seed from torch's global RNG
        return next(iter(loader))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A batch is one tensor with a leading batch dimension. With automatic batching, the
# `DataLoader` fetches `batch_size` samples and hands the list to `collate_fn`; the default one,
# `default_collate`, recurses into tuples and dicts and, for tensors, calls
# `torch.stack(samples, 0)`. Stacking needs every sample to have exactly the same shape, so two
# images of different height cannot become one `[N, C, H, W]` tensor. Nothing checks this
# earlier: each sample is valid on its own, which is why `dataset[i]` and `batch_size=1` work.
#
# ## The fix
# Make the shapes agree, either in the dataset (resize or crop every image to one size, the
# usual choice for classification) or in a custom `collate_fn` that pads every sample to the
# largest one in the batch (the usual choice when the size carries meaning, as in detection or
# sequences; keep a mask if the padding must be ignored later). Below, the padding collate.


# %%
def pad_collate(samples):
    """Zero-pad every [C, H, W] sample at the bottom/right to the batch's largest H and W."""
    height = max(s.shape[-2] for s in samples)
    width = max(s.shape[-1] for s in samples)
    return torch.stack([F.pad(s, (0, width - s.shape[-1], 0, height - s.shape[-2])) for s in samples])


def fixed(device):
    loader = DataLoader(VariableSizeImages(device), batch_size=2, collate_fn=pad_collate)
    with seeded(0):
        return next(iter(loader))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes ("Understanding & Debugging PyTorch", data section) record that the images
# must be cropped before batching, otherwise loading fails with "Sizes of tensors must match
# except in dimension 0. Got 375 and 500 in dimension 2" — the torch 1.3 wording — and point to
# an issue of the pytorch-yolo2 project with the same failure.
#
# Upstream, pytorch/pytorch#1904 (June 2017) reports `ImageFolder` + `DataLoader` failing with
# "inconsistent tensor sizes" inside `default_collate`: the same stack of unequal samples, then
# raised by the TH library. Today's message, "stack expects each tensor to be equal size, but got
# … at entry 0 and … at entry 1", is the one in countless downstream reports, such as
# qubvel-org/segmentation_models.pytorch#472; the version matrix observes it on every release it
# runs (1.13.1 on). The behaviour is by design (a batch is one tensor), so no release is known to
# have changed it, and `affects` has no lower bound: #1904 (2017) is only the oldest report found,
# not a start.

# %% [markdown]
# ## How the harness checks it
#
# A size error *after* collation is another bug: the images were cropped to one size and the
# batch stacks fine, but the mean image subtracted from it has another height, and
# broadcasting fails with "the size of tensor a must match the size of tensor b".

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """Collation raises RuntimeError: the samples cannot be stacked into one tensor."""
    # The key words of three generations of the message: 2.x, torch 1.3 (S1), 2017 TH (#1904).
    return run.raised(RuntimeError, r"equal size|sizes of tensors must match|inconsistent tensor sizes")


def near_miss(device):
    batch = torch.ones(2, 3, 4, 5, device=device)  # a well-formed batch of 4x5 images
    mean_image = torch.full((3, 5, 5), 0.5, device=device)  # computed on 5x5 images
    return batch - mean_image


def check(run, device):
    """One [2, 3, 5, 5] batch, written out by slice assignment instead of F.pad: image 0 is 4
    rows of 1.0 then a row of zeros, image 1 is 5 rows of 2.0."""
    expected = torch.zeros(2, 3, 5, 5, device=device)
    expected[0, :, :4, :] = 1.0
    expected[1] = 2.0
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="collate-variable-size",
    title="The default collate cannot batch images of different sizes",
    kind="error",
    symptom_category="wrong-shape",
    symptom_line="The DataLoader stops at the first batch: stack expects each tensor to be equal size.",
    # default_collate has stacked same-typed tensors since the first DataLoader: #1904 (June
    # 2017) hits it on that month's master ("inconsistent tensor sizes" from TH), S1 on torch 1.3
    # ("Sizes of tensors must match except in dimension 0"), this corpus on 2.13.0 ("stack
    # expects each tensor to be equal size"). The wording changed, the error did not. No
    # release is known without it, so no lower bound; upper end open.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Data': the loaded images must be cropped first, or the loader "
            "fails with 'Sizes of tensors must match except in dimension 0'"
        ),
    ),
    tags=("data", "dataloader", "collate"),
    references=(
        "https://github.com/pytorch/pytorch/issues/1904",  # default_collate on mixed sizes, 2017
        "https://github.com/marvis/pytorch-yolo2/issues/89",  # the thread S1 points to
        "https://github.com/qubvel-org/segmentation_models.pytorch/issues/472",  # today's wording
    ),
)
