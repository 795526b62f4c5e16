# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Every DataLoader worker starts with a copy of the same NumPy generator
#
# Your dataset adds random noise (or picks random crops) with a NumPy generator it creates in
# `__init__`, `self.rng = np.random.default_rng(seed)`, as NumPy now recommends. With
# `num_workers=0` the augmentation looks random. With `num_workers=2`, the samples come back in
# identical pairs of "random" noise: worker 0's first sample gets exactly the noise of worker
# 1's first sample, and so on. Each worker process received its own copy of the dataset, and
# with it an identical copy of the generator's state.

# %%
import numpy as np
from torch.utils.data import DataLoader, Dataset, get_worker_info

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Four samples in batches of two, loaded by two worker processes (worker 0 makes the first
# batch, worker 1 the second). Each sample carries the noise drawn for it, plus which worker
# drew it and that worker's seed as the DataLoader reports it.


# %%
class NoisySamples(Dataset):
    def __init__(self, seed=0):
        self.rng = np.random.default_rng(seed)  # created once, in the main process

    def __len__(self):
        return 4

    def __getitem__(self, index):
        info = get_worker_info()
        return {
            "index": index,
            "worker": info.id,
            "worker_seed": info.seed,
            "noise": self.rng.normal(),
        }  # the "augmentation"


def load(worker_init_fn=None, dataset=None):
    loader = DataLoader(
        NoisySamples() if dataset is None else dataset, batch_size=2, num_workers=2, worker_init_fn=worker_init_fn
    )
    with seeded(0):  # iter(loader) draws the workers' base seed from torch's global RNG
        return [{key: value.tolist() for key, value in b.items()} for b in loader]


def broken(device):
    # `device` plays no part: this is data loading, before any tensor reaches a device.
    return load()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Each worker is a separate process that gets its own copy of the dataset object: forked from
# the main process on Linux, unpickled from it under `spawn`. A generator stored in the
# dataset is copied in the state it had in the main process, so every worker replays the same
# sequence. PyTorch does reseed the generators it knows about in each worker: torch's own
# from `base_seed + worker_id`, Python's `random`, and since torch 1.9 (pytorch/pytorch#56488)
# NumPy's *global* legacy generator (`np.random.*`). Before 1.9 that global generator was the
# classic form of this bug; the torch releases tested here (from 1.13) are not affected by
# it. A generator object that you created yourself is invisible to the DataLoader, and no
# release reseeds it: a `np.random.Generator`, a `random.Random`, a `torch.Generator`, or the
# random state kept inside a transform library's object.
#
# ## The fix
# Give each worker its own generator, seeded from the per-worker seed the DataLoader already
# computes: a `worker_init_fn` that replaces the dataset copy's generator with
# `np.random.default_rng(get_worker_info().seed)`. That seed differs between workers and, as
# `base_seed` is drawn anew for each `iter(loader)`, between epochs, while still following the
# torch seed of the main process (so a seeded run is reproducible).


# %%
def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed)  # this worker's copy of the dataset


def fixed(device):
    return load(worker_init_fn=seed_worker)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The PyTorch FAQ has an entry for it ("My data loader workers return identical random
# numbers"), pointing to `worker_init_fn`, and the `torch.utils.data` page explains how worker
# seeds are derived under "Randomness in multi-process data loading". Tanel Pärnamaa's post "A
# bug that plagues thousands of open-source ML projects" found the global-NumPy form in
# many repositories, and pytorch/pytorch#56488 then made workers seed NumPy's global generator.
# Project-MONAI/MONAI#398 is the form shown here: random transforms with their own random state
# gave every worker the same augmentation, fixed with a `worker_init_fn` that reseeds the
# transform from `get_worker_info().seed`. This case observes the generator form on torch
# 2.13.0; the copying is how worker processes work in every release.

# %% [markdown]
# ## How the harness checks it
# The symptom is two workers producing the same sequence of different numbers. A dataset
# that reseeds its generator with a constant inside `__getitem__` also repeats itself, but then
# every sample gets the same noise, within a worker as well as across workers: a different
# bug, which the symptom refuses. The fix's check recomputes each worker's noise with
# `np.random.default_rng(worker_seed)` in this process.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The two batches come from different workers, and carry the same two noise values, which
    differ from each other within the batch: two copies of one generator."""
    if run.error is not None:
        return False
    first, second = run.value
    return (
        first["worker"] != second["worker"]
        and first["noise"] == second["noise"]
        and first["noise"][0] != first["noise"][1]
    )


def near_miss(device):
    class ReseededPerItem(NoisySamples):
        def __getitem__(self, index):
            self.rng = np.random.default_rng(0)  # reset on every call: every sample, one value
            return super().__getitem__(index)

    return load(dataset=ReseededPerItem())


def check(run, device):
    """Each worker's two noise values are the first two normals of
    `np.random.default_rng(worker_seed)`, computed here; and the two workers' seeds differ."""
    first, second = run.value
    assert first["worker_seed"][0] != second["worker_seed"][0], run.value
    for batch in run.value:
        seed = batch["worker_seed"][0]
        expected = np.random.default_rng(seed).normal(size=2).tolist()
        assert batch["noise"] == expected, (batch, expected)


CASE = Case(
    id="num-workers-same-numpy-seed",
    title="Every DataLoader worker starts with a copy of the same NumPy generator",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="With several DataLoader workers, the random augmentations repeat: each worker draws the same numbers.",
    # Worker processes copy the dataset; only torch's, random's and (since 1.9, #56488) NumPy's
    # global generators are reseeded per worker. A generator object of the dataset's own never is.
    affects=(
        Affects(
            "*",
            reason="workers copy the dataset, generator state included; the DataLoader "
            "reseeds only the global generators",
        ),
    ),
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        Source(
            title="PyTorch FAQ: My data loader workers return identical random numbers",
            url="https://pytorch.org/docs/stable/notes/faq.html#my-data-loader-workers-return-identical-random-numbers",
        ),
        Source(
            title="Tanel Pärnamaa: A bug that plagues thousands of open-source ML projects",
            url="https://tanelp.github.io/posts/a-bug-that-plagues-thousands-of-open-source-ml-projects/",
        ),
        Source(
            title="Project-MONAI/MONAI#398: DataLoader with num_workers > 1 and Rand* transforms",
            url="https://github.com/Project-MONAI/MONAI/issues/398",
        ),
    ),
    tags=("data", "dataloader", "num_workers", "randomness", "numpy"),
    references=(
        "https://pytorch.org/docs/stable/data.html#randomness-in-multi-process-data-loading",
        "https://github.com/pytorch/pytorch/pull/56488",  # DataLoader workers seed numpy.random (1.9)
    ),
)
