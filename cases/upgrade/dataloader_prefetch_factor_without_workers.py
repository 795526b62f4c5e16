# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `DataLoader(prefetch_factor=2)` with `num_workers=0` raises
#
# A training script builds its loader from a config, `DataLoader(ds, batch_size=...,
# num_workers=cfg.workers, prefetch_factor=2)`, and someone debugging on a laptop sets
# `workers: 0`. On 1.13 that ran: 2 was the default, and the loader ignored it without worker
# processes. After the upgrade to 2.0 the constructor raises `ValueError: prefetch_factor
# option could only be specified in multiprocessing.let num_workers > 0 to enable
# multiprocessing, otherwise set prefetch_factor to None.` The obvious repair, passing `None`,
# is the one spelling 1.13 rejects.

# %%
import torch
from torch.utils.data import DataLoader

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code

# %%
DATA = [torch.tensor([float(i), float(i * i)]) for i in range(6)]


def _batches(loader, device):
    with seeded(0):  # iter(DataLoader) draws its base seed from the global RNG
        return [b.to(device) for b in loader]


def broken(device):
    num_workers = 0  # from the config: no worker processes while debugging
    loader = DataLoader(DATA, batch_size=4, num_workers=num_workers, prefetch_factor=2)
    return _batches(loader, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `prefetch_factor` is the number of batches each worker process loads ahead; with
# `num_workers=0` there is no worker and nothing to prefetch. Up to 1.13 the parameter
# defaulted to 2 and the constructor only refused a value *other* than 2 without workers
# (pytorch/pytorch#68576 asked why). pytorch/pytorch#88972 made it `Optional[int]` with a
# default of `None`, filled in as 2 when workers exist, and from then on any value given
# without workers is an error, including the 2 that used to be the harmless default. The
# 1.13 check is still there for the other direction: 1.13 compares the value with 2, so
# `prefetch_factor=None` raises there.
#
# ## The fix
# Pass `prefetch_factor` only when there are workers:
# `extra = {"prefetch_factor": 2} if num_workers > 0 else {}`. This runs on 1.13.1 (the
# default 2 applies) and on 2.x (the default `None` applies). The check compares the batches
# with the ones written out by hand.


# %%
def fixed(device):
    num_workers = 0
    extra = {"prefetch_factor": 2} if num_workers > 0 else {}
    loader = DataLoader(DATA, batch_size=4, num_workers=num_workers, **extra)
    return _batches(loader, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes list it as an improvement, "Allow prefetch factor to be optional"
# (pytorch/pytorch#88972), with no entry among the backwards-incompatible changes, though
# it breaks code that ran on 1.13. The torchdata team met it first, in pytorch/data#905, now meta-pytorch/data (its
# `MultiProcessingReadingService` passed `prefetch_factor` with no workers). Later reports
# show the same error: AnswerDotAI/ModernBERT#38 (a data conversion script written against a
# 1.13 image, run on 2.3), autonomousvision/projected-gan#102 (training in Colab). Observed
# here on CPU: the loader builds and iterates on 1.13.1, and the constructor raises from 2.0.1
# on (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0,
# 2.9.1, 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and `reproduced`
# from 2.0.1 on).

# %% [markdown]
# ## How the harness checks it
#
# The other multiprocessing-only option fails the same way on every release, with its own
# message: `persistent_workers=True` with `num_workers=0` raises `ValueError:
# persistent_workers option needs num_workers > 0`. Same type, same constructor, older rule.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The constructor refuses prefetch_factor because there are no worker processes."""
    return run.raised(ValueError, r"prefetch_factor option could only be specified in multiprocessing")


def near_miss(device):
    loader = DataLoader(DATA, batch_size=4, num_workers=0, persistent_workers=True)
    return _batches(loader, device)


def check(run, device):
    """Two batches, in order, [0..3] and [4, 5], each row (i, i*i): the loader was built and
    iterated, not refused."""
    assert run.error is None, f"raised {run.error!r}"
    expected = [
        torch.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 4.0], [3.0, 9.0]], device=device),
        torch.tensor([[4.0, 16.0], [5.0, 25.0]], device=device),
    ]
    assert len(run.value) == len(expected), f"{len(run.value)} batches"
    for got, want in zip(run.value, expected):
        torch.testing.assert_close(got, want)


CASE = Case(
    id="dataloader-prefetch-factor-without-workers",
    title="DataLoader(prefetch_factor=2) with num_workers=0 raises",
    kind="error",
    symptom_category="error",
    symptom_line="DataLoader(prefetch_factor=2) with num_workers=0 raises from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="prefetch_factor defaults to None and any value without workers is refused "
            "(observed: accepted on 1.13.1, ValueError from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/88972",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.0.0").at("Improvements, Dataloader API: Allow prefetch factor to be optional (#88972)"),),
    tags=("upgrade", "dataloader", "prefetch_factor", "default_change"),
    references=(
        "https://github.com/pytorch/pytorch/issues/68576",  # prefetch_factor and num_workers=0, undocumented
        "https://github.com/pytorch/pytorch/pull/88972",  # prefetch_factor becomes Optional, default None
        "https://github.com/meta-pytorch/data/pull/905",  # downstream: torchdata's tests and reading service
        "https://github.com/AnswerDotAI/ModernBERT/issues/38",  # downstream: convert_dataset.py fails
        "https://github.com/autonomousvision/projected-gan/issues/102",  # downstream: the error in Colab
    ),
)
