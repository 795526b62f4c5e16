# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `it.next()` on a DataLoader iterator
#
# A tutorial, or your own code from a few years ago, peeks at one batch with
# `images, labels = iter(loader).next()`. On a current PyTorch it fails at once:
# `AttributeError: '_SingleProcessDataLoaderIter' object has no attribute 'next'`
# (`_MultiProcessingDataLoaderIter` with `num_workers > 0`). The same code ran on torch 1.12.

# %%
import torch
from torch.utils.data import DataLoader

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Three samples in batches of two; take the first batch the Python 2 way.


# %%
def broken(device):
    loader = DataLoader(torch.arange(3, device=device), batch_size=2)
    with seeded(0):  # iter(loader) draws a base seed from torch's global RNG
        it = iter(loader)
        return it.next()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Python 3 renamed the iterator protocol's method from `next()` to `__next__()` (PEP 3114),
# and you are meant to call it through the builtin `next(it)`, which works on every iterator.
# PyTorch's DataLoader iterators used to carry a class attribute `next = __next__` so that
# Python 2 code could call `it.next()`; Python 3 code could call it too, by accident. When
# PyTorch dropped Python 2, that alias went with the rest of the compatibility code, and every
# `it.next()` written against the old alias became an `AttributeError`. Nothing warned before:
# the alias was never documented as public API, so it was not deprecated first.
#
# ## The fix
# Call `next(it)`. For a loop that needs "one more batch" forever (two loaders of different
# lengths, iteration-based training), catch `StopIteration` and start a fresh iterator — which
# also reshuffles, when the loader shuffles.


# %%
def endless(loader):
    """Yield batches forever, starting a new pass over the loader when one ends."""
    it = iter(loader)
    while True:
        try:
            yield next(it)
        except StopIteration:
            it = iter(loader)


def fixed(device):
    loader = DataLoader(torch.arange(3, device=device), batch_size=2)
    with seeded(0):
        first = next(iter(loader))
        stream = endless(loader)
        four = [next(stream) for _ in range(4)]
    return {"first": first, "endless": four}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes show two ways to get one batch out of a loader: `next(iter(loader))`, and
# `it = iter(train_loader); image, label = it.next()`. Their troubleshooting list also builds an
# endless loader by catching `StopIteration` around `it.next()` and re-creating the iterator —
# correct at the time (2020), broken today only by the `.next()` spelling.
#
# Upstream, pytorch/pytorch#78594 ("Remove Python 2-related code from dataloader", merged in June
# 2022) removed the `next = __next__` alias from the DataLoader iterators, so 1.13 (October 2022)
# is the first release where `it.next()` raises; 1.12 and earlier accepted it, so this case's
# range starts at 1.13. pytorch/pytorch#80181 is the first report (the CIFAR-10 tutorial on a 1.13
# nightly), and in pytorch/pytorch#87955 a maintainer answers with `next(it)`. Downstream fixes,
# such as pytorch/TensorRT#1159, cite #78594 and PEP 3114. The bound 1.13.0 is read from the PR
# and these reports, not observed: the version matrix starts at 1.13.1, and it observes the
# AttributeError there and on every later release (CPU).

# %% [markdown]
# ## How the harness checks it
#
# Calling `.next()` on the `DataLoader` itself fails with the same words, but for another
# reason: a loader is an iterable, not an iterator, and never had `next` in any release (it
# needs `iter(loader)` first). The symptom names the iterator class, so it refuses this.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The loader's *iterator* (`_SingleProcessDataLoaderIter`, `_MultiProcessingDataLoaderIter`)
    has no `next` method: AttributeError naming the iterator class and 'next'."""
    return run.raised(AttributeError, r"DataLoaderIter' object has no attribute 'next'")


def near_miss(device):
    loader = DataLoader(torch.arange(3, device=device), batch_size=2)
    return loader.next()  # 'DataLoader' object has no attribute 'next'


def check(run, device):
    """Batches written out by hand: batches of two over [0, 1, 2] are [0, 1] then [2]; `next(it)`
    gives the first, and the endless stream starts over after the second."""
    torch.testing.assert_close(run.value["first"], torch.tensor([0, 1], device=device))
    assert len(run.value["endless"]) == 4
    for got, want in zip(run.value["endless"], ([0, 1], [2], [0, 1], [2])):
        torch.testing.assert_close(got, torch.tensor(want, device=device))


CASE = Case(
    id="dataloader-iterator-next",
    title="it.next() on a DataLoader iterator",
    kind="error",
    symptom_category="error",
    symptom_line="iter(loader).next() raises AttributeError: the iterator has no attribute next.",
    # Up to 1.12 the DataLoader iterators kept `next = __next__  # Python 2 compatibility`;
    # #78594 ("Remove Python 2-related code from dataloader", merged June 2022) deleted it, so
    # 1.13 is the first release that raises (#80181: a 1.13 nightly; #87955: works on the
    # older install, fails on 1.13). The version matrix starts at 1.13.1 and observes it on
    # every release; 1.13.0 itself is read from the PR, not observed. Upper end open.
    affects=(Affects(">=1.13", since="PR #78594 removed the alias in 1.13.0"),),
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section 'Data': one batch via it = iter(train_loader); it.next()"),
        S1.at("section 'Troubleshooting': an endless loader that re-creates the iterator on StopIteration"),
    ),
    tags=("data", "dataloader", "python2", "iterator"),
    references=(
        "https://github.com/pytorch/pytorch/pull/78594",  # the alias removed (1.13)
        "https://github.com/pytorch/pytorch/issues/80181",  # first reports, on a 1.13 nightly
        "https://github.com/pytorch/pytorch/issues/87955",  # maintainer: use next(it)
        "https://github.com/pytorch/TensorRT/pull/1159",  # downstream fix citing #78594
        "https://peps.python.org/pep-3114/",  # iterator.next() renamed __next__ in Python 3
    ),
)
