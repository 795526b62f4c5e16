# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A hard-coded size in `x.view(-1, N)`
#
# The classifier flattens its feature maps with `x.view(-1, 16 * 5 * 5)`, as in many
# tutorials, and works on the images it was written for. Fed images twice as large, it raises
# nothing: a batch of 4 images comes back as 16 rows of predictions. The `-1` let `view` put
# the extra features into the batch dimension, so each "prediction" is made from a quarter of
# one image's feature map.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small convolutional network written for 10 × 10 images: a convolution keeps the size,
# a pooling halves it, so the head expects `16 * 5 * 5 = 400` features. It is now given a
# batch of 4 images of 20 × 20.

# %%
BATCH, CLASSES = 4, 3


class Net(nn.Module):
    def __init__(self, flatten):
        super().__init__()
        self.features = nn.Sequential(nn.Conv2d(1, 16, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2))
        self.head = nn.Linear(16 * 5 * 5, CLASSES)
        self.flatten = flatten

    def forward(self, x):
        return self.head(self.flatten(self.features(x)))


def hard_coded(x):
    return x.view(-1, 16 * 5 * 5)  # the size of a 10 x 10 input, written in


def model_and_images(device, flatten, size=20):
    with seeded(0):
        model = Net(flatten)
        images = torch.randn(BATCH, 1, size, size)
    return model.to(device), images.to(device)


def broken(device):
    model, images = model_and_images(device, hard_coded)
    with torch.no_grad():
        out = model(images)
    return {"batch": images.shape[0], "output": out}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `view(-1, 400)` asks for rows of 400 numbers and lets the first dimension be whatever makes
# the element count work. A 20 × 20 image gives a feature map of 16 × 10 × 10 = 1 600 numbers,
# four rows' worth, so 4 images become 16 rows, each holding a quarter of one image's
# features. The linear layer gets exactly the 400 inputs it wants and says nothing. The
# mistake surfaces only if the element count is not a multiple of 400 (a size error naming
# `[-1, 400]`), or later, if a loss compares 16 predictions with 4 labels; at inference, or
# in a loss that broadcasts, it can go unnoticed. The `-1` sits in the wrong place: it should
# stand for the features, which depend on the image size, while the batch size should be
# kept as it is.
#
# ## The fix
# Keep the batch dimension and flatten the rest: `torch.flatten(x, 1)` (or
# `x.view(x.size(0), -1)`, or `nn.Flatten()`). A mismatch between the feature size and the
# head then fails loudly, at the linear layer, naming both sizes. To accept any input size, as
# here, make the head's input independent of it: an `nn.AdaptiveAvgPool2d((5, 5))` before
# flattening always yields 16 × 5 × 5 features. The check compares each row of the batched
# output with the model run on that image alone.


# %%
class FixedNet(Net):
    def __init__(self):
        super().__init__(lambda x: torch.flatten(x, 1))  # keep dim 0, the batch
        self.features = nn.Sequential(*self.features, nn.AdaptiveAvgPool2d((5, 5)))  # any size -> 16x5x5


def fixed(device):
    with seeded(0):
        model = FixedNet()
        images = torch.randn(BATCH, 1, 20, 20)
    model, images = model.to(device), images.to(device)
    with torch.no_grad():
        out = model(images)
    return {"batch": images.shape[0], "output": out}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The pattern comes from early tutorials, including PyTorch's own "Training a Classifier"
# (CIFAR-10) tutorial, whose network flattened with `x.view(-1, 16 * 5 * 5)` before it switched
# to `torch.flatten(x, 1)`, "flatten all dimensions except batch". Issue trackers show both
# outcomes: in
# clcarwin/convert_torch_to_pytorch#1 a converted `View(-1)` flattened the batch dimension
# into the features and was fixed to `x.view(x.size(0), -1)`; in pytorch/examples#210 a user's
# `x.view(-1, 32 * 4 * 4)` had to be matched to the real feature size. The `torch.flatten`
# documentation describes `start_dim`. `view` has inferred `-1` this way in
# every release; the matrix observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# More rows than images is not always this pitfall: a loader with `batch_size=16` also gives
# 16 predictions, one per image. The symptom asks for the output's rows to be a multiple of
# the input batch, and more than it: images folded into rows, not a larger batch.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The output has more rows than the batch had images, a whole multiple of it: each image
    was split across rows."""
    if run.error is not None:
        return False
    rows, batch = run.value["output"].shape[0], run.value["batch"]
    return run.value["output"].dim() == 2 and rows > batch and rows % batch == 0


def near_miss(device):
    """A batch of 16 images of the size the model was written for: 16 rows, one per image."""
    model, images = model_and_images(device, hard_coded, size=10)
    images = images.repeat(4, 1, 1, 1)
    with torch.no_grad():
        out = model(images)
    return {"batch": images.shape[0], "output": out}


def check(run, device):
    """One row per image, and row i is what the model gives for image i alone."""
    assert run.error is None, f"raised {run.error!r}"
    with seeded(0):
        model = FixedNet()
        images = torch.randn(BATCH, 1, 20, 20)
    model, images = model.to(device), images.to(device)
    with torch.no_grad():
        alone = torch.cat([model(images[i : i + 1]) for i in range(BATCH)])
    torch.testing.assert_close(run.value["output"], alone)


CASE = Case(
    id="hard-coded-flatten-size",
    title="A hard-coded size in x.view(-1, N)",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="A batch of 4 images gives 16 rows of predictions, and no error.",
    # view has inferred a -1 dimension from the element count since its first releases;
    # no release is known to change it.
    affects=(Affects("*", reason="view infers -1 from the element count; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="clcarwin/convert_torch_to_pytorch#1: Fix View conversion (the batch flattened into the features)",
            url="https://github.com/clcarwin/convert_torch_to_pytorch/pull/1",
        ),
        Source(
            title="pytorch/examples#210: size '[-1 x 300]' (a comment: x.view(-1, 32 * 4 * 4) matched to the feature size)",
            url="https://github.com/pytorch/examples/issues/210",
        ),
        Source(
            title="PyTorch tutorials: Training a Classifier (its Net once flattened with x.view(-1, 16 * 5 * 5), "
            "now with torch.flatten(x, 1))",
            url="https://github.com/pytorch/tutorials/blob/main/beginner_source/blitz/cifar10_tutorial.py",
        ),
        Source(
            title="PyTorch documentation: torch.flatten (start_dim)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.flatten.html",
        ),
    ),
    tags=("shapes", "view", "flatten", "cnn"),
    references=("https://docs.pytorch.org/tutorials/beginner/blitz/cifar10_tutorial.html",),
)
