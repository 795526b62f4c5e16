# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # HWC to CHW with `view` instead of `permute`
#
# An image loaded with PIL, OpenCV or `imageio` is an `H × W × C` array; a convolution wants
# `C × H × W`. `img.view(C, H, W)` (or `reshape`) accepts the numbers, returns exactly the shape
# you asked for, and raises nothing. The network trains on it, but every "colour plane" it sees
# is a stripe pattern of red, green and blue values, and the spatial layout is scrambled too.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A 2×3 RGB image whose pixel `(h, w)` in channel `c` holds `100·c + 10·h + w`: the hundreds
# digit names the channel, the tens the row, the units the column.

# %%
H, W, C = 2, 3, 3


def _hwc_image(device):
    pixels = [[[100.0 * c + 10 * h + w for c in range(C)] for w in range(W)] for h in range(H)]
    return torch.tensor(pixels, device=device)  # [H, W, C]


def broken(device):
    return _hwc_image(device).view(C, H, W)  # right shape, wrong pixels


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    print(broken("cpu"))  # plane 0 holds 0, 100, 200, 1, 101, 201: stripes of all three colours

# %% [markdown]
# ## Why
# `view` and `reshape` never move data: they read the elements in their existing order
# (row-major: the last axis fastest) and cut that sequence into the new shape. In an HWC image
# the memory order is `R G B R G B …`, pixel after pixel, so the first `H·W` numbers, which
# become "channel 0", are the red, green and blue of the first few pixels. `permute(2, 0, 1)`
# instead relabels the axes: element `[c, h, w]` of the result is element `[h, w, c]` of the
# input, which is what "HWC to CHW" means. (`permute` returns a non-contiguous view; a later
# `view` on it raises and asks for `reshape`, but nothing needs `.contiguous()` for correctness.)
#
# ## The fix


# %%
def fixed(device):
    return _hwc_image(device).permute(2, 0, 1)  # [C, H, W], axes moved


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1) remark in the data-loading section that images from PIL (and
# anything `plt.imshow` shows) are `[32, 32, 3]` while tensors are `[3, 32, 32]`, which is why
# torchvision's `ToTensor` includes a permutation; their PIL conversion snippets use
# `.permute(2, 0, 1)` and `.permute(1, 2, 0)` for the two directions. Upstream, a user asked
# for a warning in `view`'s documentation because it is easily mistaken for a transpose
# (pytorch/pytorch#16560; the maintainers' answer: `view` behaves like NumPy's `reshape`), and
# torchvision's maintainers showed with a small `arange` example why `to_tensor` cannot replace
# its transposes by a single `view` (pytorch/vision#676).

# %% [markdown]
# ## How the harness checks it
#
# Mixed-up colour planes have another classic cause: OpenCV loads images as BGR, and a correct
# `permute` then puts blue in plane 0. Every plane is one whole channel, in the wrong order:
# a bug of its own, not this pitfall.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The C×H×W result holds the pixels in their HWC memory order (R G B R G B …, written out
    in Python), cut into planes: colour plane c does not come from channel c."""
    if run.error is not None or not isinstance(run.value, torch.Tensor) or tuple(run.value.shape) != (C, H, W):
        return False
    memory_order = [100.0 * c + 10 * h + w for h in range(H) for w in range(W) for c in range(C)]
    return torch.equal(run.value.cpu().flatten(), torch.tensor(memory_order))


def near_miss(device):
    return _hwc_image(device).permute(2, 0, 1).flip(0)  # BGR planes: blue first


def check(run, device):
    """The same pixel formula, written directly in CHW order."""
    expected = torch.tensor(
        [[[100.0 * c + 10 * h + w for w in range(W)] for h in range(H)] for c in range(C)], device=device
    )
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="view-instead-of-permute",
    title="HWC to CHW with view instead of permute",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="An image reshaped from HWC to CHW with view has scrambled channels and no error.",
    # view/reshape keep the element order by definition (like NumPy's reshape); no release is
    # known to have changed that. No known lower bound ("*"); the matrix observes it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("data loading: PIL images are [32, 32, 3], tensors [3, 32, 32], so ToTensor permutes"),
        S1.at("PIL conversion snippets: .permute(1, 2, 0) and .permute(2, 0, 1)"),
    ),
    tags=("shapes", "view", "reshape", "permute", "image"),
    references=(
        "https://github.com/pytorch/pytorch/issues/16560",  # view() confused with transposition
        "https://github.com/pytorch/pytorch/issues/2013",  # how view() orders elements
        "https://github.com/pytorch/vision/issues/676",  # why to_tensor cannot use a single view
        "https://docs.pytorch.org/docs/stable/generated/torch.permute.html",
    ),
)
