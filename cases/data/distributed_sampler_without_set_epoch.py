# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `DistributedSampler` without `set_epoch`
#
# Moving a training script to `DistributedDataParallel`, you replace `shuffle=True` with a
# `DistributedSampler(dataset, shuffle=True)`, as the documentation says. The data is indeed
# shuffled, but the same way every epoch: each process sees its samples in exactly the order
# of epoch 0, epoch after epoch. Nothing warns; the run just loses the fresh batches that
# reshuffling was meant to give, and its results differ from the single-process version.

# %%
import torch
from torch.utils.data import DataLoader, DistributedSampler

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# No process group is needed to see it: the sampler is given `num_replicas=1, rank=0`
# explicitly, as one process of a job of one. A dataset of 8 samples, batches of 4, three
# epochs; the function returns the order in which each epoch visited the samples.

# %%
SIZE, EPOCHS = 8, 3


def epoch_orders(call_set_epoch):
    dataset = torch.arange(SIZE)
    sampler = DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=True)
    loader = DataLoader(dataset, batch_size=4, sampler=sampler)
    orders = []
    with seeded(0):  # iter(loader) draws a base seed from the global RNG
        for epoch in range(EPOCHS):
            if call_set_epoch:
                sampler.set_epoch(epoch)
            orders.append(torch.cat(list(loader)).tolist())
    return orders


def broken(device):
    return epoch_orders(call_set_epoch=False)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Every process must shuffle the *same* way, or the shards they take from the permutation
# would overlap and leave samples out. So `DistributedSampler` does not draw from the global
# random generator, which may differ between processes; it seeds a private `torch.Generator`
# with `seed + epoch` and permutes with it. `seed` is fixed (0 unless given) and `epoch`
# changes only when you call `sampler.set_epoch(epoch)`. Without that call `epoch` stays 0,
# and every epoch gets the permutation of epoch 0. The loader has no way to know an epoch
# started, so it cannot do this for you.
#
# ## The fix
# Call `sampler.set_epoch(epoch)` at the start of every epoch, before iterating the loader,
# with the same epoch number on every process. The check rebuilds the expected orders by
# hand: `torch.randperm(8)` with a generator seeded with `0 + epoch`, which is what the
# sampler documents and does.


# %%
def fixed(device):
    return epoch_orders(call_set_epoch=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `DistributedSampler` documentation carries a warning: in distributed mode, calling
# `set_epoch()` at the beginning of each epoch, before creating the `DataLoader` iterator, is
# necessary to make shuffling work across epochs, otherwise the same ordering is always used.
# It was not always there: pytorch/pytorch#11324 (2018) asked why the sampler does not use the
# default generator and noted that `set_epoch` was undocumented; pytorch/pytorch#31771
# ("DistributedSampler can't shuffle the dataset") is the bug report of a user who met it,
# and pytorch/pytorch#40043 that the docs' own example lacked the call. Downstream fixes are
# many, such as lucidrains/DALLE-pytorch#230 ("use data_sampler.set_epoch to avoid having the
# same order in each epoch"). No release changed the mechanism; the matrix observes it from
# 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# The same order every epoch is not always this pitfall: a `DistributedSampler(...,
# shuffle=False)`, used for evaluation, repeats `0, 1, ..., 7` every epoch on purpose. The
# symptom asks for a shuffled order (not the identity) that is repeated unchanged.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Every epoch visits the samples in the same order, and that order is shuffled."""
    if run.error is not None:
        return False
    orders = run.value
    return all(o == orders[0] for o in orders) and orders[0] != list(range(SIZE))


def near_miss(device):
    """An evaluation sampler, shuffle=False: the identity order, every epoch, as asked."""
    dataset = torch.arange(SIZE)
    loader = DataLoader(
        dataset, batch_size=4, sampler=DistributedSampler(dataset, num_replicas=1, rank=0, shuffle=False)
    )
    with seeded(0):
        return [torch.cat(list(loader)).tolist() for _ in range(EPOCHS)]


def check(run, device):
    """Epoch e visits the samples in the order of torch.randperm(8) under a generator seeded
    with 0 + e (the sampler's documented seed + epoch), and the epochs differ."""
    assert run.error is None, f"raised {run.error!r}"
    expected = [torch.randperm(SIZE, generator=torch.Generator().manual_seed(0 + e)).tolist() for e in range(EPOCHS)]
    assert run.value == expected, f"{run.value} != {expected}"
    assert len({tuple(o) for o in run.value}) == EPOCHS


CASE = Case(
    id="distributed-sampler-without-set-epoch",
    title="DistributedSampler without set_epoch",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Every epoch visits the data in the same shuffled order.",
    # DistributedSampler has seeded its permutation with the epoch set by set_epoch since it
    # was added; no release makes it advance the epoch by itself.
    affects=(Affects("*", reason="the permutation is seeded with seed + epoch; no release changes it"),),
    devices=("cpu",),
    device_independent=True,  # a sampler of indices: the device plays no part
    sources=(
        Source(
            title="PyTorch documentation: torch.utils.data.distributed.DistributedSampler (the set_epoch warning)",
            url="https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler",
        ),
        Source(
            title="pytorch/pytorch#31771: DistributedSampler can't shuffle the dataset",
            url="https://github.com/pytorch/pytorch/issues/31771",
        ),
        Source(
            title="pytorch/pytorch#11324: Why does DistributedDataSampler not use default RNG?",
            url="https://github.com/pytorch/pytorch/issues/11324",
        ),
    ),
    tags=("data", "distributed", "sampler", "shuffle"),
    references=(
        "https://github.com/pytorch/pytorch/issues/40043",
        "https://github.com/lucidrains/DALLE-pytorch/pull/230",
    ),
)
