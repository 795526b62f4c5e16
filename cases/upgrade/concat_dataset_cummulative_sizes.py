# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `ConcatDataset.cummulative_sizes` starts to warn in 2.4
#
# A batch sampler that keeps each batch inside one of several concatenated datasets reads the
# boundaries from `ConcatDataset.cummulative_sizes` (two m's: the original spelling of 2017).
# In a library module this ran silently for years: the alias raised a `DeprecationWarning`,
# which Python hides unless the code runs in `__main__`. After an upgrade to 2.4 the same read
# prints a `FutureWarning`, "`cummulative_sizes` attribute is renamed to `cumulative_sizes`",
# which Python always shows.

# %%
import itertools
import warnings

import torch
from torch.utils.data import ConcatDataset, TensorDataset

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Python's default filters ignore `DeprecationWarning` raised on behalf of code outside
# `__main__`, such as a sampler in a package. The run reproduces those defaults with a scoped
# filter, because the harness records every warning.


# %%
def _datasets(device):
    return [TensorDataset(torch.arange(n, device=device)) for n in (3, 2, 4)]


def broken(device):
    data = ConcatDataset(_datasets(device))
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=DeprecationWarning)  # Python's default outside __main__
        bounds = data.cummulative_sizes  # the 2017 spelling
    return torch.tensor(bounds, device=device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# In 2017 the attribute was renamed `cumulative_sizes` (PR #3534) and the misspelt name kept
# as a property that raises a `DeprecationWarning`. In 2.4, PR #126898 rewrote torch's
# deprecations with `typing_extensions.deprecated(..., category=FutureWarning)`, this property
# among them. Python filters the two categories differently: a `DeprecationWarning` is shown
# only when triggered from `__main__` (and by test runners), a `FutureWarning` always. The
# same line that was silent in a library is now printed at every epoch.
#
# ## The fix
# Read `cumulative_sizes`, which every release has. The check rebuilds the boundaries from the
# parts' lengths: a running sum, 3, 3+2, 3+2+4.


# %%
def fixed(device):
    data = ConcatDataset(_datasets(device))
    return torch.tensor(data.cumulative_sizes, device=device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#3534 ("fixed a typo in ConcatDataset.cumulative_sizes attribute name",
# November 2017) renamed the attribute and, at the maintainers' request, kept the old name
# with a deprecation warning. pytorch/pytorch#126898 (May 2024, in 2.4) moved the warning to
# `FutureWarning`: in the installed 2.3.1 the property calls `warnings.warn(...,
# DeprecationWarning)`, in 2.4.1 it is decorated with `@deprecated(...,
# category=FutureWarning)`. Code that still reads the old name is easy to find in public
# repositories (samplers that read the dataset boundaries, multi-task concatenated datasets);
# no downstream issue report about this warning was found.
#
# Observed here on CPU: quiet under the default filters on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1;
# the `FutureWarning` on 2.4.1, 2.6.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Other renamed attributes warn with the same category and a similar sentence: calling
# `torch.cuda.memory_cached()` says it "has been renamed to `torch.cuda.memory_reserved`"
# (a `FutureWarning` on every release, even without a GPU). Not this rename.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Reading the misspelt alias emits a FutureWarning, which default filters show."""
    return run.warned(FutureWarning, r"cummulative_sizes")


def near_miss(device):
    return torch.cuda.memory_cached()  # FutureWarning: ... has been renamed to torch.cuda.memory_reserved


def check(run, device):
    """The boundaries are the running sum of the parts' lengths, and nothing warned (the
    alias returns the same list, so its warning is what tells it apart)."""
    lengths = [len(d) for d in _datasets(device)]
    torch.testing.assert_close(run.value, torch.tensor(list(itertools.accumulate(lengths)), device=device))
    assert not run.warnings, f"the read warned: {run.warnings[0].message}"


CASE = Case(
    id="concat-dataset-cummulative-sizes",
    title="ConcatDataset.cummulative_sizes starts to warn in 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="ConcatDataset.cummulative_sizes starts to print a FutureWarning in torch 2.4.",
    affects=">=2.4",
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("deprecation warnings become FutureWarning (#126898)"),),
    tags=("upgrade", "data", "deprecation", "warning_filters"),
    references=(
        "https://github.com/pytorch/pytorch/pull/3534",  # the rename, keeping the misspelt alias
        "https://github.com/pytorch/pytorch/pull/126898",  # DeprecationWarning -> FutureWarning (2.4)
    ),
)
