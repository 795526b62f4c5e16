# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A per-channel vector broadcast against the width
#
# You normalise a batch of feature maps `x` of shape `[N, C, H, W]` with a per-channel mean of
# shape `[C]`: `x - mean`. On most inputs this raises `RuntimeError: The size of tensor a (W)
# must match the size of tensor b (C) at non-singleton dimension 3`. But on a map whose width
# happens to equal its channel count (64 channels at 64×64, 3 channels on a 3-pixel-wide
# crop) there is no error at all: the subtraction runs, and every pixel gets the mean of the
# wrong channel.

# %%
import re

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The same line on two batches of three channels: a 4×3 map (C == W == 3) and a 4×5 map
# (C != W). Each channel is filled with exactly its own mean, so subtracting the per-channel
# mean must give zeros everywhere. The run keeps what each batch gave: a tensor, or the error.

# %%
MEANS = (0.5, 0.25, 0.125)  # exact in binary: any non-zero result is the bug, not rounding


def _per_channel_constant_batch(device, n=2, h=4, w=3):
    x = torch.empty(n, len(MEANS), h, w, device=device)
    for c, m in enumerate(MEANS):
        x[:, c] = m
    return x


def _centre(x, mean):
    """x - mean, or the RuntimeError it raised: both are observations."""
    try:
        return x - mean
    except RuntimeError as exc:
        return exc


def broken(device):
    mean = torch.tensor(MEANS, device=device)  # [3]
    return {
        "C == W": _centre(_per_channel_constant_batch(device, w=3), mean),  # [2, 3, 4, 3]
        "C != W": _centre(_per_channel_constant_batch(device, w=5), mean),  # [2, 3, 4, 5]
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    print(broken("cpu")["C == W"][0, :, 0, :])  # row c, column w holds means[c] - means[w]

# %% [markdown]
# ## Why
# Broadcasting lines shapes up from the **right**: `[3]` against `[2, 3, 4, 3]` is read as
# `[1, 1, 1, 3]`, so the vector runs along the width, not the channels. Output pixel
# `(n, c, h, w)` becomes `x[n, c, h, w] - mean[w]`. When `W != C` the last dimensions clash and
# PyTorch raises, which is the lucky case. When `W == C` every rule is satisfied, the result has
# the right shape, and the only trace is wrong numbers (here, row `c`, column `w` of each
# plane holds `means[c] - means[w]`).
#
# ## The fix
# Give the vector the trailing singleton dimensions that put it on the channel axis:
# `mean.reshape(1, -1, 1, 1)` or `mean[:, None, None]` (shape `[C, 1, 1]`, which then lines
# up as `[1, C, 1, 1]`). Both are views: no copy, and no `permute` of the big tensor is needed.


# %%
def fixed(device):
    mean = torch.tensor(MEANS, device=device)
    return {
        "C == W": _per_channel_constant_batch(device, w=3) - mean.reshape(1, -1, 1, 1),
        "C != W": _per_channel_constant_batch(device, w=5) - mean[:, None, None],
    }


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1, section on reshaping) describe broadcasting as "align from the back"
# and take BatchNorm as the example: its mean has shape `[c]` while the input is `[N, c, w, h]`,
# so the mean must be reshaped to `[1, c, 1, 1]` or indexed as `mean[:, None, None]` before
# the subtraction; the author remarks that the second form works only because broadcasting
# aligns from the end. This case shows what happens when that step is forgotten, in both of
# its forms, and its symptom asserts both: an error when `W != C` and a silently wrong result
# when `W == C`. PyTorch gained NumPy-style broadcasting in 0.2.0, whose
# release notes already warned that it could turn old code into silent bugs; the rule (compare
# sizes starting from the trailing dimension) is the one in the broadcasting semantics notes.

# %% [markdown]
# ## How the harness checks it
#
# Look-alikes that are not this pitfall: the means reshaped correctly but listed in the wrong
# order (BGR statistics on an RGB batch) are wrong numbers too, and a mean with one entry too
# many, reshaped correctly, raises the same size error, at dimension 1 (the channels).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def _aligned_with_width(value):
    """Pixel (n, c, h, w) is means[c] - means[w], computed in Python: the vector ran along W."""
    expected = [[MEANS[c] - MEANS[w] for w in range(3)] for c in range(3)]
    return (
        isinstance(value, torch.Tensor)
        and tuple(value.shape) == (2, 3, 4, 3)
        and torch.equal(value.cpu(), torch.tensor(expected)[None, :, None, :].expand(2, 3, 4, 3))
    )


def symptom(run):
    """Both forms: silently wrong numbers where C == W (each pixel offset by the mean of the
    channel its column number names), and where C != W an error at dimension 3, the width."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    clash = run.value.get("C != W")
    return (
        _aligned_with_width(run.value.get("C == W"))
        and isinstance(clash, RuntimeError)
        and re.search(r"\(5\).*\(3\).*dimension 3", str(clash)) is not None
    )


def near_miss(device):
    bgr = torch.tensor(MEANS[::-1], device=device)
    extra = torch.tensor(MEANS + (1.0,), device=device)
    return {
        "C == W": _centre(_per_channel_constant_batch(device, w=3), bgr[:, None, None]),
        "C != W": _centre(_per_channel_constant_batch(device, w=5), extra[:, None, None]),
    }


def check(run, device):
    """Both batches centre to exactly zero: every channel was filled with its own mean, so zero
    is known by construction, not computed by torch."""
    for key, width in (("C == W", 3), ("C != W", 5)):
        value = run.value[key]
        assert isinstance(value, torch.Tensor), f"{key}: {value!r}"
        torch.testing.assert_close(value, torch.zeros(2, 3, 4, width, device=device), rtol=0, atol=0)


CASE = Case(
    id="broadcast-trailing-alignment",
    title="A per-channel vector broadcast against the width",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="Subtracting a per-channel mean raises a size mismatch, or silently subtracts along the width.",
    # Broadcasting arrived in 0.2.0 (its release notes warn it can cause silent bugs); the
    # alignment from the trailing dimension is the documented rule and has not changed since.
    # From 1.13.1 on the matrix observes it. Both forms show on every release and device, so one
    # predicate checks both (Affects.form is for forms that differ between releases or devices).
    affects=(Affects(">=0.2", since="the 0.2.0 release notes, which introduced NumPy-style broadcasting"),),
    devices=("cpu", "cuda"),
    sources=(S1.at("'尺度变化' (reshaping): broadcasting a BN mean of shape [c] onto [N,c,w,h]"),),
    tags=("shapes", "broadcasting", "normalization"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/broadcasting.html",
        "https://github.com/pytorch/pytorch/releases/tag/v0.2.0",  # broadcasting introduced
    ),
)
