# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.stack` where `torch.cat` was meant
#
# You run a model over a dataset in mini-batches, keep each batch's embeddings (shape
# `[B, D]`) in a list, join the list and take the per-feature mean over all samples. With
# `torch.stack` the "dataset mean" comes back as a `[B, D]` table instead of a `[D]` vector,
# and nothing complains: the table even broadcasts cleanly against every later batch of size
# `B`, so "centring" the data subtracts a different mean at each position in the batch.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Three mini-batches of 2 samples × 4 features. Sample `s` of the dataset (0…5) has every
# feature equal to `s`, so the true per-feature mean is 2.5.


# %%
def _embedding_batches(device, n_batches=3, batch=2, dim=4):
    sample_ids = torch.arange(n_batches * batch, dtype=torch.float32, device=device)
    return [sample_ids[b * batch : (b + 1) * batch, None].expand(batch, dim) for b in range(n_batches)]


def broken(device):
    outs = _embedding_batches(device)  # three tensors of shape [2, 4]
    everything = torch.stack(outs)  # [3, 2, 4]: a new leading axis
    return everything.mean(dim=0)  # "per-feature mean over the dataset"


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    # The wrong "mean" still broadcasts against any batch of 2: no error to warn you.
    print(_embedding_batches("cpu")[0] - broken("cpu"))

# %% [markdown]
# ## Why
# `torch.stack(tensors, dim)` inserts a **new** dimension of length `len(tensors)` and places
# the inputs side by side along it; `torch.cat(tensors, dim)` joins them along a dimension they
# **already** have, so the rank does not change. Stacking three `[2, 4]` batches gives
# `[3, 2, 4]`; `mean(dim=0)` then averages over the batches, not over the samples, and leaves
# one row per position in a batch: `[[2, 2, 2, 2], [3, 3, 3, 3]]` instead of `[2.5] * 4`.
# The mistake also runs the other way: `torch.cat` on a list of `[C, H, W]` images gives
# `[K*C, H, W]` rather than a batch `[K, C, H, W]`. (The source's own example: for `x` of shape
# `[1, 2, 2]`, `stack([x, x], dim=2)` is `[1, 2, 2, 2]` while `cat([x, x], dim=2)` is
# `[1, 2, 4]`.)
#
# ## The fix
# Join samples that already carry a batch axis with `torch.cat(..., dim=0)`; use `torch.stack`
# only to create the batch axis from single samples.


# %%
def fixed(device):
    outs = _embedding_batches(device)
    everything = torch.cat(outs, dim=0)  # [6, 4]: six samples
    return everything.mean(dim=0)  # [4]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1, section on reshaping) contrast the two functions when building fake
# data and when collecting tensors from a loop: `stack` creates a new dimension, `cat` does
# not, shown on a `[1, 2, 2]` tensor joined along `dim=2`. This is the documented behaviour of
# `torch.stack` ("along a new dimension") and `torch.cat` ("in the given dimension"); each
# page points to the other. Nothing in torch can tell which one you meant, so the only
# protection is checking the shape you expect after the join.

# %% [markdown]
# ## How the harness checks it
#
# A mean with a leftover axis is not always this pitfall: `mean(dim=0, keepdim=True)` on the
# right `cat` keeps a `[1, 4]` row (a `keepdim` copied from a normalisation layer). Its values
# are the right 2.5; only the extra axis of length 1 is wrong.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The "mean" is a [2, 4] table with one row per position in a batch: position 0 held
    samples 0, 2, 4 (mean 2) and position 1 held 1, 3, 5 (mean 3), worked out by hand."""
    if run.error is not None or not isinstance(run.value, torch.Tensor) or run.value.shape != (2, 4):
        return False
    per_position = torch.tensor([[2.0] * 4, [3.0] * 4])
    return torch.allclose(run.value.cpu(), per_position)


def near_miss(device):
    return torch.cat(_embedding_batches(device), dim=0).mean(dim=0, keepdim=True)


def check(run, device):
    """By hand: samples 0..5, every feature equal to the sample index, so each of the 4 features
    has mean (0+1+...+5)/6 = 2.5."""
    expected = torch.full((4,), sum(range(6)) / 6, device=device)
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="stack-vs-cat",
    title="torch.stack where torch.cat was meant",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="The mean over all batches comes back as a [B, D] table instead of a [D] vector.",
    # The documented meaning of both functions; no release is known to have changed it.
    # No known lower bound ("*"); the matrix observes it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S1.at("'尺度变化' (reshaping): stack creates a new dimension, cat does not"),),
    tags=("shapes", "stack", "cat"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.stack.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.cat.html",
    ),
)
