# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Indexing a tensor with a list of slices is deprecated
#
# A padding or cropping helper builds its index on the fly, one slice per dimension, in a
# Python list (`idx = [slice(None)] * x.dim(); idx[d] = slice(0, n)`), and writes `x[idx]`.
# On 1.13 that runs quietly and means `x[tuple(idx)]`. After an upgrade to 2.8 every such
# line prints `UserWarning: Using a non-tuple sequence for multidimensional indexing is
# deprecated and will be changed in pytorch 2.9; use x[tuple(seq)] instead of x[seq]`, raised
# from C++. The result is still the same crop; the warning announces that a list index will
# one day be read as a tensor of indices, which would give either an error or other numbers.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    x = torch.arange(24.0, device=device).reshape(2, 3, 4)
    idx = [slice(None)] * x.dim()  # one slice per dimension, kept in a list
    idx[2] = slice(0, 2)  # crop the last dimension to 2
    return x[idx]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# NumPy long accepted a list as a multidimensional index when it held slices, `None` or
# `Ellipsis`, or other sequences, and guessed that `a[[slice(None), 0]]` meant
# `a[(slice(None), 0)]`. The guess made `a[[0, 1]]` and `a[[0, slice(None)]]` mean two unrelated
# things; NumPy deprecated it (1.15) and later dropped it, so that a list is always an array of
# indices. torch copied the old guess, so torch and NumPy disagreed on the same index
# (pytorch/pytorch#119548). pytorch/pytorch#154806 made torch warn in 2.8 before it
# switches to NumPy's reading; until then the value is unchanged, so only the warning shows.
#
# ## The fix
# Index with a tuple: `x[tuple(idx)]` is the explicit multidimensional index on every
# release and warns nowhere. The check builds the expected crop from a plain slice.


# %%
def fixed(device):
    x = torch.arange(24.0, device=device).reshape(2, 3, 4)
    idx = [slice(None)] * x.dim()
    idx[2] = slice(0, 2)
    return x[tuple(idx)]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#154806 ("fix numpy compatibility for 2d small list indices", June 2025) added
# the C++ warning in `python_variable_indexing.cpp` and left the old reading in place because
# torch's own test suite used the syntax widely; 2.8.0 is the first release that ships it
# (`python -m torch_pitfalls.surface diff` shows the native message first in 2.8.0; this project did
# not locate its line in the 2.8.0 notes).
# Downstream it surfaced across the ecosystem as soon as 2.8 was out: the Fourier layers of
# neuraloperator (neuraloperator/neuraloperator#647), PyG's large-graph indexer
# (pyg-team/pytorch_geometric#10389), torchcodec's frame batches (meta-pytorch/torchcodec#748),
# and Hugging Face transformers (huggingface/transformers#43167). Observed with this project's
# venvs: silent on 1.13.1 and 2.7.1, a `UserWarning` on 2.8.0, 2.9.1, 2.10.0, 2.13.0, 2.14.1 and
# 2.15.0.
# The warning still promises a change "in pytorch 2.9"; as of 2.15.0 the list is still read as
# a tuple, so the case records a warning, not a changed value.

# %% [markdown]
# ## How the harness checks it
#
# Indexing with a `uint8` mask also warns from C++ with a `UserWarning` that something is
# deprecated (use a `bool` mask), on every release: an indexing deprecation, not this one.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The C++ deprecation warning about a non-tuple index."""
    return run.warned(UserWarning, r"non-tuple sequence for multidimensional indexing")


def near_miss(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    mask = torch.tensor([1, 0], dtype=torch.uint8, device=device)
    return x[mask]  # UserWarning: indexing with dtype torch.uint8 is now deprecated


def check(run, device):
    """The crop equals x[:, :, :2] written out by hand, and nothing warned: the list index
    gives the same numbers today, so the missing warning is what tells the fix apart."""
    expected = torch.tensor(
        [[[0.0, 1.0], [4.0, 5.0], [8.0, 9.0]], [[12.0, 13.0], [16.0, 17.0], [20.0, 21.0]]],
        device=device,
    )
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the index warned: {run.warnings[0].message}"


CASE = Case(
    id="non-tuple-sequence-indexing",
    title="Indexing a tensor with a list of slices is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="x[list_of_slices] warns about a non-tuple sequence index, from torch 2.8.",
    affects=(
        Affects(
            versions=">=2.8",
            reason="a list holding slices used as an index warns from C++ (observed 2.8.0 to 2.15.0; "
            "silent on 2.7.1); the announced change of meaning had not happened by 2.15.0",
            issue="https://github.com/pytorch/pytorch/pull/154806",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.8.0").at(
            "the release that first ships pytorch/pytorch#154806, the non-tuple indexing warning"
        ),
    ),
    tags=("upgrade", "indexing", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/issues/119548",  # numpy disagreement that motivated it
        "https://github.com/pytorch/pytorch/pull/154806",  # the warning
        "https://github.com/neuraloperator/neuraloperator/pull/647",  # downstream: FNO's spectral conv
        "https://github.com/pyg-team/pytorch_geometric/pull/10389",  # downstream: PyG
        "https://github.com/huggingface/transformers/pull/43167",  # downstream: transformers
    ),
)
