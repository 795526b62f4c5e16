# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `batch_sampler` and `shuffle=True` together
#
# You write a `BatchSampler` (to group samples of similar length, or to control exactly which
# indices go together), pass it to the `DataLoader`, and keep the `shuffle=True` — or the
# `batch_size=32` — you always write. The loader is not even built:
# `ValueError: batch_sampler option is mutually exclusive with batch_size, shuffle, sampler,
# and drop_last`.

# %%
import torch
from torch.utils.data import BatchSampler, DataLoader, RandomSampler, SequentialSampler

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Four samples, a batch sampler that yields index pairs, and `shuffle=True` on top.


# %%
def broken(device):
    data = torch.arange(4.0, device=device)
    batches = BatchSampler(SequentialSampler(data), batch_size=2, drop_last=False)
    return DataLoader(data, batch_sampler=batches, shuffle=True)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A `DataLoader` gets its batches of indices from exactly one place. By default it builds them
# itself: `shuffle` picks a `RandomSampler` or a `SequentialSampler`, and `batch_size` and
# `drop_last` wrap that in a `BatchSampler`. A `batch_sampler` you pass *is* that whole
# pipeline — it already decides the order, the batch size and what happens to the last
# incomplete batch — so `batch_size`, `shuffle`, `sampler` and `drop_last` would have nothing
# to act on. Rather than silently ignore them (and leave you believing the data is shuffled),
# the constructor refuses any of them that differs from its default. The same rule, in a
# smaller form, applies to `sampler` with `shuffle=True`.
#
# ## The fix
# Put the randomness inside the batch sampler: build it over a `RandomSampler` (here with its
# own `torch.Generator`, so the order is reproducible), and pass nothing else about batching.


# %%
def fixed(device):
    data = torch.arange(4.0, device=device)
    order = RandomSampler(data, generator=torch.Generator().manual_seed(0))
    batches = BatchSampler(order, batch_size=2, drop_last=False)
    loader = DataLoader(data, batch_sampler=batches)
    with seeded(0):  # iter(loader) draws a base seed from torch's global RNG
        return list(loader)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, describing how a `DataLoader` draws indices (a `Sampler` yields indices, a
# `BatchSampler` groups them into batches; `shuffle=True` means a random sampler), add that
# when you define your own `BatchSampler`, `shuffle` has to be left `False`.
#
# Upstream, `batch_sampler` was introduced by pytorch/pytorch#1867 (June 2017) for batches of
# uneven size such as fairseq's; in its review the maintainers asked to raise an error when one of
# the replaced options is also given, instead of ignoring it, which is the check met here.
# pytorch/pytorch#6108 (2018) then made `loader.batch_size` and `loader.drop_last` read `None`
# when a batch sampler is given. The error text is the same on every release the version matrix
# runs (1.13.1 on), and libraries that rebuild loaders still trip on it
# (catalyst-team/catalyst#271).

# %% [markdown]
# ## How the harness checks it
#
# A plain `sampler` (not a batch sampler) with `shuffle=True` is refused by a message of the
# same shape, "sampler option is mutually exclusive with shuffle". It is the sampler's own
# rule: the batch size still applies there, and the symptom must tell the two apart.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """Building the loader raises ValueError naming the mutually exclusive options."""
    return run.raised(ValueError, r"batch_sampler.*mutually exclusive")


def near_miss(device):
    data = torch.arange(4.0, device=device)
    return DataLoader(data, sampler=SequentialSampler(data), batch_size=2, shuffle=True)


def check(run, device):
    """Two batches of two that together hold every sample exactly once: sorted, the samples
    0, 1, 2, 3 written out by hand."""
    assert [len(b) for b in run.value] == [2, 2]
    torch.testing.assert_close(torch.cat(run.value).sort().values, torch.tensor([0.0, 1.0, 2.0, 3.0], device=device))


CASE = Case(
    id="batch-sampler-exclusive",
    title="batch_sampler and shuffle=True together",
    kind="error",
    symptom_category="error",
    symptom_line="The DataLoader refuses to build: batch_sampler is mutually exclusive with shuffle.",
    # `batch_sampler` was added by #1867 (June 2017, released in 0.2), whose review asked for an
    # error when one of the options it replaces is also given; the version matrix observes the
    # check in DataLoader's constructor on every release it runs (1.13.1 on). Lower end from
    # that PR, not observed by this project; upper end open.
    affects=(Affects(">=0.2", since="PR #1867 added batch_sampler with this check (June 2017, released in 0.2.0)"),),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Data': with a custom BatchSampler, shuffle must be set to False"),),
    tags=("data", "dataloader", "sampler"),
    references=(
        "https://github.com/pytorch/pytorch/pull/1867",  # batch_sampler added, with the check
        "https://github.com/pytorch/pytorch/pull/6108",  # batch_size/drop_last None with it
        "https://github.com/catalyst-team/catalyst/pull/271",  # the error met downstream
    ),
)
