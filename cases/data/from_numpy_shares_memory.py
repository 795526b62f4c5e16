# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.from_numpy` shares memory with the array
#
# Your dataset keeps its images in one NumPy array and converts each item with
# `torch.from_numpy`, then normalizes it in place (`x -= mean; x /= std`) to save a copy. The
# first epoch trains fine. The second epoch's inputs are normalized twice, the third three
# times — no error, no warning, just a loss curve that stops making sense, because the
# in-place normalization wrote straight into the dataset's array.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

MEAN, STD = 50.0, 50.0


def load(images, i, device):
    """The broken item loader: wrap the row, normalize it in place, move it to the device."""
    x = torch.from_numpy(images[i])
    x -= MEAN  # writes into images[i]: x and the array share one buffer
    x /= STD
    return x.to(device)


# %% [markdown]
# ## The broken code
# A two-image "dataset" of constant pixels (100.0), read for two epochs.


# %%
def broken(device):
    images = np.full((2, 3), 100.0, dtype=np.float32)
    epochs = [torch.stack([load(images, i, device) for i in range(2)]) for _ in range(2)]
    return images, epochs


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.from_numpy(a)` does not copy: it builds a tensor header around the array's own
# buffer (same data pointer, same strides), which is what makes it free for large arrays. Every
# in-place operation on the tensor (`-=`, `/=`, `.clamp_()`, `x[...] = ...`) is therefore an
# in-place operation on the array, and the other way round. `tensor.numpy()` shares memory the
# same way for a CPU tensor. Plain Python assignment, `b = a`, copies nothing either: `b` is a
# second name for the same tensor. Only the *first* use looks right, since only then does the
# buffer still hold the original values; here the first epoch sees (100 − 50) / 50 = 1, the
# second sees (1 − 50) / 50 = −0.98. Moving to a GPU (`.to("cuda")`) does copy, but by then
# the in-place write on the CPU side has already happened.
#
# ## The fix
# Either normalize out of place (`x = (x - mean) / std` makes a new tensor and leaves the
# array alone) or copy when converting: `torch.tensor(a)`, or `torch.from_numpy(a).clone()`
# (and `t.clone()` instead of `b = t` when you need an independent tensor).


# %%
def load_copy(images, i, device):
    x = torch.from_numpy(images[i])
    x = (x - MEAN) / STD  # out of place: a new tensor, the array is untouched
    return x.to(device)


def fixed(device):
    images = np.full((2, 3), 100.0, dtype=np.float32)
    epochs = [torch.stack([load_copy(images, i, device) for i in range(2)]) for _ in range(2)]
    copied = torch.tensor(images)  # the other fix: an explicit copy at conversion
    copied -= MEAN  # changes the copy only
    return images, epochs


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes warn, in their Tensor section, that assigning a tensor to a new name only
# passes a reference to the same memory and that `clone()` is the deep copy; their recipes for
# converting a PIL image to a tensor and for initializing weights from NumPy both go through
# `torch.from_numpy`, which shares memory the same way.
#
# The `torch.from_numpy` documentation states the contract: the returned tensor and the ndarray
# share the same memory, modifications to one are reflected in the other, and the tensor cannot be
# resized; the `Tensor.numpy` page says the same for the opposite direction. It is the same in
# every release this project knows of (so `affects` has no lower bound), and the version matrix
# observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
#
# Inputs normalized twice have another cause too: the dataset normalizes (out of place) and the
# training loop normalizes the batch again. Every epoch then sees (1 − 50) / 50 = −0.98, wrong
# but the same each time, and the dataset's array is untouched: no shared memory involved.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The dataset's array was changed by loading, so the two epochs saw different inputs."""
    images, (first, second) = run.value
    return bool((images != 100.0).any()) and not torch.equal(first, second)


def near_miss(device):
    images = np.full((2, 3), 100.0, dtype=np.float32)
    epochs = []
    for _ in range(2):
        batch = (torch.from_numpy(images) - MEAN) / STD  # the dataset: out of place, a new tensor
        epochs.append((batch.to(device) - MEAN) / STD)  # the training loop normalizes once more
    return images, epochs


def check(run, device):
    """By hand: the array still holds 100 everywhere (after both fixes worked on it), and every
    epoch sees (100 - 50) / 50 = 1."""
    images, epochs = run.value
    np.testing.assert_array_equal(images, np.full((2, 3), 100.0, dtype=np.float32))
    assert len(epochs) == 2
    for batch in epochs:
        torch.testing.assert_close(batch, torch.ones(2, 3, device=device))


CASE = Case(
    id="from-numpy-shares-memory",
    title="torch.from_numpy shares memory with the array",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Data normalised in place gets normalised again every epoch: the array was shared.",
    # Sharing is the documented contract of from_numpy and Tensor.numpy (docs of 1.8, 1.9, 1.10
    # and stable say so); the version matrix observes it from 1.13.1 on. No release is known
    # to have changed it, so no lower bound; upper end open.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section 'Tensor': plain assignment passes a reference; clone() makes a copy"),
        S1.at("the PIL-to-tensor recipe built on torch.from_numpy(np.asarray(image))"),
    ),
    tags=("data", "numpy", "aliasing", "inplace"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.from_numpy.html",
        "https://pytorch.org/docs/1.9.0/generated/torch.Tensor.numpy.html",
    ),
)
