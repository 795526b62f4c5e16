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
import torch

from harness import Case, observe
from harness.sources import S1

CASE = Case(
    id="broadcast-trailing-alignment",
    title="A per-channel vector broadcast against the width",
    kind="silent",
    # Broadcasting arrived in 0.2.0 (its release notes warn it can cause silent bugs); the
    # alignment from the trailing dimension is the documented rule and has not changed since.
    # Observed here on 2.13.0.
    affects=">=0.2",
    devices=("cpu", "cuda"),
    sources=(S1.at("'尺度变化' (reshaping): broadcasting a BN mean of shape [c] onto [N,c,w,h]"),),
    tags=("shapes", "broadcasting", "normalization"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/broadcasting.html",
        "https://github.com/pytorch/pytorch/releases/tag/v0.2.0",  # broadcasting introduced
    ),
)

# %% [markdown]
# ## The broken code
# Three channels on a 4×3 map (so C == W == 3). Each channel is filled with exactly its own
# mean, so subtracting the per-channel mean must give zeros everywhere.

# %%
MEANS = (0.5, 0.25, 0.125)  # exact in binary: any non-zero result is the bug, not rounding


def _per_channel_constant_batch(device, n=2, h=4, w=3):
    x = torch.empty(n, len(MEANS), h, w, device=device)
    for c, m in enumerate(MEANS):
        x[:, c] = m
    return x


def broken(device):
    x = _per_channel_constant_batch(device)          # [2, 3, 4, 3]
    mean = torch.tensor(MEANS, device=device)         # [3]
    return x - mean                                   # no error: shapes are broadcastable


def symptom(run):
    """The result has x's shape but is not all zero: pixels were offset by another channel's mean."""
    if run.error is not None or tuple(run.value.shape) != (2, 3, 4, 3):
        return False
    return bool((run.value != 0).any())


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    print(broken("cpu")[0, :, 0, :])  # row c, column w holds means[c] - means[w]
    # The other form of the same bug: as soon as W != C the line raises instead.
    x = torch.zeros(2, 3, 4, 5)
    print(observe(lambda: x - torch.tensor(MEANS)))

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
    x = _per_channel_constant_batch(device)
    mean = torch.tensor(MEANS, device=device)
    a = x - mean.reshape(1, -1, 1, 1)
    b = x - mean[:, None, None]
    # Every channel holds its own mean, so the centred batch is exactly zero (by construction).
    expected = torch.zeros(2, 3, 4, 3, device=device)
    torch.testing.assert_close(a, expected, rtol=0, atol=0)
    torch.testing.assert_close(b, expected, rtol=0, atol=0)
    return a


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
# its forms: an error when `W != C` (shown in the demo cell above) and a silently wrong result
# when `W == C` (the case's check). PyTorch gained NumPy-style broadcasting in 0.2.0, whose
# release notes already warned that it could turn old code into silent bugs; the rule (compare
# sizes starting from the trailing dimension) is the one in the broadcasting semantics notes.
#
# Broadcasting is resolved from the shapes alone, so CUDA tensors are expected to behave the
# same; the CUDA side was not observed by this project's runs (CPU only).
