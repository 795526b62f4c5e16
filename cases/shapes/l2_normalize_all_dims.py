# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # L2-normalising the whole tensor instead of each feature vector
#
# You L2-normalise feature maps before a detection head, meaning to put every position's
# channel vector on the unit sphere. No error, the right shape, but the vectors come out far
# shorter than 1, their length shrinks as the batch or the maps get bigger, and the same image
# gives different features depending on which other images share its batch. Training limps and
# accuracy collapses.

# %%
import torch
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A batch of four N×C×H×W feature maps from a local generator, normalised by one norm over the
# whole tensor: what `tf.nn.l2_normalize(x)` computes with its default `axis=None` (up to its
# epsilon), and what `x / x.norm()` computes in PyTorch. The first sample is normalised twice:
# inside the batch, and alone.


# %%
def feature_maps(device):
    gen = torch.Generator(device=device).manual_seed(0)
    return torch.randn(4, 3, 2, 2, generator=gen, device=device)  # N x C x H x W


def l2_normalize_all(x):
    return x / x.norm()  # one norm over every element of the tensor


def broken(device):
    batch = feature_maps(device)
    return l2_normalize_all(batch)[:1], l2_normalize_all(batch[:1])  # in the batch, alone


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    in_batch, alone = broken("cpu")
    print(in_batch.norm(dim=1).flatten())  # lengths 0.08 to 0.33, not 1
    print(alone.norm(dim=1).flatten())  # the same vectors: 0.16 to 0.67 when normalised alone

# %% [markdown]
# ## Why
# `x.norm()` with no `dim` is the norm of the tensor flattened to one vector. Dividing by it
# makes the *whole batch* a unit vector, so the N·H·W channel vectors get a root-mean-square
# length of `1/sqrt(N·H·W)`: 0.25 here, about 0.026 for a single 38×38 map, and different
# again for each level of a feature pyramid. Worse, the divisor is shared: a sample's output
# depends on every other sample in the batch, so the same image gives different features in
# training (batch of 32) and at inference (batch of 1). Per-vector normalisation divides each
# position's channel vector by its own length, and a sample then does not care what else is in
# the batch.
#
# The two libraries' defaults point opposite ways: TensorFlow's `l2_normalize` reduces over
# *all* axes unless told otherwise, PyTorch's `F.normalize` over `dim=1` — the channels of an
# N×C×H×W map, or the features of an N×D matrix.

# %% [markdown]
# ## The fix
# `F.normalize(x, dim=1)`: each position's channel vector is divided by its own L2 norm. The
# result is checked against the norm written out by hand, `sqrt(sum over C of x²)`, the vectors
# have length 1, and the sample normalised alone equals the sample normalised in its batch.


# %%
def fixed(device):
    batch = feature_maps(device)
    return F.normalize(batch, dim=1)[:1], F.normalize(batch[:1], dim=1)  # in the batch, alone


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S3, 2019) is a month of debugging a TensorFlow PeleeNet detector whose AP had
# fallen to a tenth. After the attention fix (`softmax-singleton-axis`) changed nothing, the
# author found `tf.nn.l2_normalize(feature)` applied to each feature level, compared it with a
# PyTorch implementation that normalised over `dim=1`, and noticed that TensorFlow's default
# `axis=None` does not mean "the last axis" (as `axis=None` does for `tf.nn.softmax`) but
# every axis: the implementation reduces with a sum over all dimensions. Passing `axis=-1` (the
# channels in TensorFlow's N×H×W×C) brought the AP back; the modified network then reached
# 22 mAP by iteration 10k.
#
# TensorFlow documents `axis=None` as the default of `tf.math.l2_normalize`; its 1-D example
# normalises the whole vector, and google-ai-edge/LiteRT#9212 confirms that eager TensorFlow
# normalises the whole tensor when no axis is given. PyTorch's `F.normalize` arrived with
# pytorch/pytorch#1467 (May 2017) with an explicit `dim`, today defaulting to 1.

# %% [markdown]
# ## How the harness checks it
#
# Batch-dependent features have other causes. A BatchNorm left in training mode at inference
# normalises each channel with the statistics of the batch it is in: the sample changes with
# its batch too, but not by one common factor, and the result is no unit vector.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S3


def symptom(run):
    """The mark of one norm over the whole tensor: the sample normalised alone is a unit vector
    as a whole, and inside the batch it is the same tensor scaled down by one common factor, so
    its channel vectors are shorter than 1 and depend on the batch."""
    if run.error is not None:
        return False
    in_batch, alone = run.value
    scale = in_batch.norm()  # the common factor: ||sample|| / ||batch||
    return (
        torch.allclose(alone.norm(), torch.tensor(1.0, device=alone.device))
        and bool(scale < 0.99)
        and torch.allclose(in_batch, alone * scale)
    )


def near_miss(device):
    batch = feature_maps(device)

    def bn(x):
        return F.batch_norm(x, None, None, training=True)  # the statistics of this batch

    return bn(batch)[:1], bn(batch[:1])


def check(run, device):
    """The sample equals x / sqrt(sum over C of x²) written by hand, its vectors have length 1,
    and it is the same in its batch and alone."""
    in_batch, alone = run.value
    sample = feature_maps(device)[:1]
    by_hand = sample / (sample * sample).sum(dim=1, keepdim=True).sqrt()
    torch.testing.assert_close(in_batch, by_hand)
    torch.testing.assert_close(in_batch.norm(dim=1), torch.ones(1, 2, 2, device=device))
    torch.testing.assert_close(alone, in_batch)


CASE = Case(
    id="l2-normalize-all-dims",
    title="L2-normalising the whole tensor instead of each feature vector",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Normalised feature vectors are far shorter than 1, and shrink as the batch grows.",
    star=True,  # a pitfall the source posts single out
    # Arithmetic, not an API behaviour: `x / x.norm()` divides by one norm over every element in
    # all releases. Shown on 2.13.0 here; no release is known to have changed it (F.normalize,
    # the fix, dates from May 2017, pytorch/pytorch#1467). No known lower bound ("*"); the matrix
    # observes it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S3.at("section 2.3.2 'l2_normalize': tf.nn.l2_normalize(feature) with the default axis=None"),),
    tags=("shapes", "normalize", "batch_dependence", "tensorflow_port"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.normalize.html",
        "https://tensorflow.org/versions/r2.4/api_docs/python/tf/math/l2_normalize",  # axis=None
        "https://github.com/google-ai-edge/LiteRT/issues/9212",  # TF default: the whole tensor
        "https://github.com/pytorch/pytorch/pull/1467",  # adds F.normalize(input, p, dim)
    ),
)
