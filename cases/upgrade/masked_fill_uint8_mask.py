# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `masked_fill` with a `uint8` mask raises from 2.1
#
# Attention code written before boolean tensors existed builds its causal mask as bytes,
# `torch.triu(torch.ones(n, n, dtype=torch.uint8), diagonal=1)`, and hides the future with
# `scores.masked_fill(mask, float("-inf"))`. Through 2.0 this works: it prints a deprecation
# `UserWarning` (`masked_fill_ received a mask with dtype torch.uint8, this behavior is now
# deprecated`), which years of logs taught people to ignore. After an upgrade to 2.1 the same
# line raises `RuntimeError: masked_fill_ only supports boolean masks, but got mask with dtype
# unsigned char`, and the model does not run at all.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code

# %%
SCORES = [[0.5, 1.0, -0.5], [2.0, 0.0, 1.5], [-1.0, 0.25, 3.0]]


def broken(device):
    scores = torch.tensor(SCORES, device=device)
    future = torch.triu(torch.ones(3, 3, dtype=torch.uint8, device=device), diagonal=1)  # bytes
    return scores.masked_fill(future, float("-inf"))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Before 1.2 masks were `uint8` tensors; 1.2 introduced `torch.bool`, made comparisons return
# it, and deprecated byte masks with a warning. The deprecation lasted until the 2.1 cycle,
# when the maintainers removed it (pytorch/pytorch#94634, pytorch/pytorch#96594 for
# `masked_fill`, pytorch/pytorch#96112 for `masked_select`): a non-boolean mask is now an error
# in every backend instead of being read byte by byte (and, for float masks, sometimes not at
# all). Nothing changed for masks that already are `torch.bool`.
#
# ## The fix
# Make the mask boolean: build it with `dtype=torch.bool` or convert it with `.bool()`. That
# spelling has been quiet since 1.2.


# %%
def fixed(device):
    scores = torch.tensor(SCORES, device=device)
    future = torch.triu(torch.ones(3, 3, dtype=torch.uint8, device=device), diagonal=1).bool()
    return scores.masked_fill(future, float("-inf"))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#94634 asked to disallow non-boolean masks; pytorch/pytorch#96594 ("Deprecate
# non-bool masks in masked_fill", March 2023) turned the old warning into an error for 2.1, and
# pytorch/pytorch#96112 did the same for `masked_select` (its description notes that byte support
# had been deprecated long enough to remove it in 2.1). The 2.1.0 notes list it among the
# backwards-incompatible changes; `python -m torch_pitfalls.surface diff` shows the native warning
# gone between 2.0.1 and 2.1.2. Downstream, open_clip had to switch its tests to bool masks for
# 2.1 (mlfoundations/open_clip#665); the warning it replaced had been reported for years, e.g. in
# kimiyoung/transformer-xl#115. Observed with this project's venvs: 1.13.1 and 2.0.1 fill the
# mask and print the `UserWarning` (the runner calls them `absent`: the symptom is the error),
# and 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.6.0, 2.13.0 and 2.15.0 raise the `RuntimeError`. Indexing
# with a `uint8` tensor (`x[mask]`) still only warns as of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# `masked_fill` raises `RuntimeError` for other misuses too: a fill value given as a tensor
# with dimensions (a per-row value) is refused on every release, whatever the mask's dtype.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """masked_fill refused the byte mask."""
    return run.raised(RuntimeError, r"masked_fill.*only supports boolean masks")


def near_miss(device):
    scores = torch.tensor(SCORES, device=device)
    future = torch.ones(3, 3, device=device).triu(diagonal=1).bool()
    return scores.masked_fill(future, torch.full((3,), -1.0, device=device))  # value must be 0-dim


def check(run, device):
    """The entries above the diagonal are -inf and the rest are the scores, built by hand with
    `torch.where` from the row and column indices; the broken call raises on 2.1 and later, so
    it has no result to accept."""
    scores = torch.tensor(SCORES, device=device)
    rows = torch.arange(3, device=device).unsqueeze(1)
    cols = torch.arange(3, device=device).unsqueeze(0)
    expected = torch.where(cols > rows, torch.full_like(scores, float("-inf")), scores)
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="masked-fill-uint8-mask",
    title="masked_fill with a uint8 mask raises from 2.1",
    kind="error",
    symptom_category="error",
    symptom_line="masked_fill with a uint8 mask raises from torch 2.1; it only warned before.",
    affects=(
        Affects(
            versions=">=2.1",
            reason="masked_fill accepts only bool masks: a RuntimeError (observed 2.1.2 to 2.15.0; "
            "1.13.1 and 2.0.1 fill the right entries and print a deprecation UserWarning)",
            issue="https://github.com/pytorch/pytorch/pull/96594",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.1.0").at(
            "Backwards Incompatible Changes: masked_fill (and masked_select, masked_scatter) accept only boolean masks"
        ),
    ),
    tags=("upgrade", "masking", "dtype"),
    references=(
        "https://github.com/pytorch/pytorch/pull/96594",  # non-bool masks rejected in masked_fill
        "https://github.com/pytorch/pytorch/issues/94634",  # disallow non-bool masks
        "https://github.com/pytorch/pytorch/pull/96112",  # the same for masked_select
        "https://github.com/mlfoundations/open_clip/pull/665",  # downstream: open_clip's tests on 2.1
        "https://github.com/kimiyoung/transformer-xl/issues/115",  # downstream: the years of warnings
    ),
)
