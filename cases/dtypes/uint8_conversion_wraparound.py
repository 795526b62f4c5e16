# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `(x * 255).byte()` wraps around instead of saturating
#
# You save a network's output as an image with `(x * 255).byte()`. Most pixels look right, but
# the brightest highlights come out black and some of the darkest shadows come out white,
# speckled over the picture. The output was meant to lie in [0, 1] and nearly did: a value of
# 1.004 or -0.004 is enough.

# %%
import numpy as np
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Four pixels: black, mid-grey, a highlight slightly above 1 and a shadow slightly below 0.


# %%
def broken(device):
    x = torch.tensor([0.0, 0.5, 1.004, -0.004], device=device)
    return (x * 255).byte()  # 0, 127.5, 256.02, -1.02 before the cast


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `.byte()` (like `.to(torch.uint8)`) truncates toward zero and then keeps the value modulo 256;
# it does not clip to the 0..255 range. In C++ a float that does not fit the unsigned target
# is undefined behaviour, and CPUs and GPUs used to disagree on it, so torch converts float to
# uint8 through int64 and keeps the low eight bits: 256.02 becomes 256 and then 0, -1.02 becomes
# -1 and then 255. The values that were *most* white turn black, and the reverse. Network
# outputs overshoot [0, 1] all the time (no final sigmoid, interpolation ringing, a
# normalisation undone with slightly different constants), so this shows up in real images.
# Note that `torch.compile` does not promise the same wrapped values (#131910: the CPU
# inductor gave 0 for negative inputs): out-of-range casts are not something to rely on.
#
# ## The fix
# Clamp into the target range before converting, as the source's own snippet does:
# `torch.clamp(x * 255, 0, 255).byte()` (round first with `.round()` if you want nearest
# rather than truncated values).


# %%
def fixed(device):
    x = torch.tensor([0.0, 0.5, 1.004, -0.004], device=device)
    return torch.clamp(x * 255, min=0, max=255).byte()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes convert a tensor to a `PIL.Image` with `torch.clamp(tensor * 255, min=0,
# max=255).byte()`: the clamp is the fix, and dropping it, as `(x * 255).byte()` does, is the
# pitfall (torchvision's `to_pil_image` also converts float tensors with a bare `mul(255).byte()`,
# so it expects inputs already in [0, 1]). In torch, pytorch/pytorch#7644 (2018, "Fix UB when
# converting negative floating values to uint8_t") first dealt with the undefined cast; a later
# CUDA regression that produced 0 instead of the wrapped value (#36807, on a 1.6 pre-release) was
# addressed by #36832 ("Makes CUDA -float->uint8 cast consistent with CPU"), and today's
# `c10/util/TypeCast.h` routes float to uint8 through int64 with a comment saying it is there for
# consistent results across CPU and GPU compilers.

# %% [markdown]
# ## How the harness checks it
#
# A nearly black image has another common cause: the `* 255` was forgotten, so `.byte()`
# truncates values in [0, 1] to 0 (and 1.004 to 1). Those pixels are wrong, but nothing
# wrapped around, and the symptom must not claim them.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The highlight became 0 (black) and the shadow 255 (white): the cast wrapped."""
    if run.error is not None:
        return False
    pixels = run.value.cpu().tolist()
    return pixels[2] == 0 and pixels[3] == 255


def near_miss(device):
    x = torch.tensor([0.0, 0.5, 1.004, -0.004], device=device)
    return x.byte()  # [0, 0, 1, 0]: scaled by nothing


def check(run, device):
    """The pixels [0, 127, 255, 0], from the same conversion done in NumPy with an explicit
    clip to 0..255 before the cast."""
    expected = np.clip(np.array([0.0, 0.5, 1.004, -0.004], dtype=np.float32) * 255, 0, 255)
    torch.testing.assert_close(run.value.cpu(), torch.from_numpy(expected.astype(np.uint8)))


CASE = Case(
    id="uint8-conversion-wraparound",
    title="(x * 255).byte() wraps around instead of saturating",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Bright pixels come out black and dark ones white after (x * 255).byte().",
    # Observed on 2.13.0 (CPU). Out-of-range float -> uint8 goes through int64 and keeps the
    # low 8 bits, meant to agree on both devices (c10/util/TypeCast.h; #7644, #36832). No
    # release is known to saturate, so no bound is set.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section 'Troubleshooting', tensor to PIL.Image: torch.clamp(tensor * 255, min=0, max=255).byte()"),
    ),
    tags=("dtypes", "uint8", "image", "overflow", "clamp"),
    references=(
        "https://github.com/pytorch/pytorch/pull/7644",  # negative float -> uint8 made defined (via int)
        "https://github.com/pytorch/pytorch/issues/36807",  # a CUDA regression that gave 0 instead
        "https://github.com/pytorch/pytorch/pull/36832",  # made CUDA agree with CPU again
        "https://github.com/pytorch/pytorch/issues/131910",  # torch.compile (CPU inductor) differs
    ),
)
