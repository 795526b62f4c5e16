# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.manual_seed` does not seed `random` or NumPy
#
# You put `torch.manual_seed(0)` at the top of the training script to make runs repeatable.
# The weights are initialized the same every time, yet two runs of the same script give
# different losses from the first epoch: the crop positions, flips and jitter of your data
# augmentation come from Python's `random` or from `np.random`, and those were never seeded.

# %%
import json
import random

import numpy as np
import torch

from torch_pitfalls import observe, run_pythons

# One "training run", in two versions: seed torch alone, or every generator; then draw what
# initialization (torch) and augmentation (random, NumPy) would draw. Each run is a fresh
# interpreter, as a re-run is.
TORCH_SEEDED = """
import json, random
import numpy as np
import torch
torch.manual_seed(0)
print(json.dumps([torch.rand(1, device=DEVICE).item(), random.random(), np.random.rand()]))
"""
EVERY_GENERATOR_SEEDED = """
import json, random
import numpy as np
import torch
random.seed(0)
np.random.seed(0)
torch.manual_seed(0)
print(json.dumps([torch.rand(1, device=DEVICE).item(), random.random(), np.random.rand()]))
"""


def two_runs(script, device):
    """Run the script twice on ``device`` in fresh interpreters (started together); return each run's three
    draws."""
    program = f"DEVICE = {device!r}\n" + script
    draws = []
    for done in run_pythons([program] * 2):
        if done.returncode != 0:
            raise RuntimeError(done.stderr)
        draws.append(json.loads(done.stdout))
    return draws


# %% [markdown]
# ## The broken code
# Only torch is seeded. The script runs twice, each time in a new process.


# %%
def broken(device):
    return two_runs(TORCH_SEEDED, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# There is no single global random state in a Python program: torch has its generators (one
# for the CPU and one per CUDA device — `torch.manual_seed` sets all of them), Python's
# `random` module has a Mersenne Twister of its own, and NumPy's legacy `np.random.*`
# functions use a third. Each starts from fresh OS entropy when the process starts unless it
# is seeded, and seeding one tells the others nothing. Data pipelines mix all three:
# torchvision's transforms draw from torch, but many augmentation libraries and hand-written
# transforms call `random` or `np.random`. Inside `DataLoader` workers, torch seeds each
# worker's torch and `random` generators from a base seed, and since #56488 (2021) NumPy's too;
# with `num_workers=0` everything runs in the main process, on the generators seeded (or not)
# by the script.
#
# ## The fix
# Seed every generator the code draws from, at the start, with one seed: `random.seed`,
# `np.random.seed` and `torch.manual_seed` (which covers CUDA; `torch.cuda.manual_seed_all` as
# in S1 is harmless but redundant). Better still, give the code that draws random numbers its
# own generator object (`np.random.default_rng(seed)`, `random.Random(seed)`,
# `torch.Generator().manual_seed(seed)`) and pass it along.


# %%
def fixed(device):
    return two_runs(EVERY_GENERATOR_SEEDED, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes end their troubleshooting list with a "Random Seed" recipe: draw a seed if none
# is given, then call `random.seed`, `torch.manual_seed` and, with CUDA,
# `torch.cuda.manual_seed_all`. The recipe seeds Python and torch; a pipeline that also draws
# from NumPy needs `np.random.seed` as well, which is the point of this case.
#
# PyTorch's reproducibility notes ("Reproducibility", already in the 1.3 and 1.9 docs) say the
# same: `torch.manual_seed` seeds the RNG for all devices, CPU and CUDA, and Python's `random` and
# the random generators of other libraries such as NumPy must be seeded separately. The
# `torch.manual_seed` page says it sets the seed "on all devices". For worker processes,
# pytorch/pytorch#56488 (commit aec83ff, 2021) made each DataLoader worker seed NumPy from its
# base seed; that concerns workers only, not the main process shown here.

# %% [markdown]
# ## How the harness checks it
#
# Seeding all three and still seeing NumPy change is another pitfall: the augmentation draws
# from a `np.random.default_rng()` made without a seed, a Generator of its own that
# `np.random.seed` does not reach. `random` repeats here, so the symptom refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def stable(value):
    """What is the same on every run of the case: for each generator, whether the script's two
    runs drew the same number, and that number where they did (an unseeded draw is new each
    time, so only the fact that it differed is kept)."""
    first, second = value
    return {
        name: (round(a, 6) if a == b else "differs") for name, a, b in zip(("torch", "random", "numpy"), first, second)
    }


def symptom(run):
    """torch's draw repeats across the two runs, but `random`'s and NumPy's do not."""
    (t1, r1, n1), (t2, r2, n2) = run.value
    return t1 == t2 and r1 != r2 and n1 != n2


def near_miss(device):
    private_numpy = EVERY_GENERATOR_SEEDED.replace("np.random.rand()", "np.random.default_rng().random()")
    return two_runs(private_numpy, device)


def check(run, device):
    """Both runs drew the same three numbers, and those are the values computed another way,
    in this process, with private generators seeded 0 (no global state touched): what a run
    must draw when all three global generators start from seed 0."""
    first, second = run.value
    expected = [
        torch.rand(1, device=device, generator=torch.Generator(device).manual_seed(0)).item(),
        random.Random(0).random(),
        np.random.RandomState(0).rand(),
    ]
    assert first == second == expected, (first, second, expected)


CASE = Case(
    id="seed-every-rng",
    title="torch.manual_seed does not seed random or NumPy",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="torch.manual_seed(0) is set, yet two runs give different losses from the first epoch.",
    # Three independent generators by design: torch's own, Python's `random` and NumPy's
    # global one; the reproducibility notes of 1.3 and 1.9 already list seeding `random` and
    # NumPy as separate steps. The version matrix observes it from 1.13.1 on. No release is
    # known to have changed it, so no lower bound; upper end open.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Troubleshooting', 'Random Seed': random.seed and "
            "torch.manual_seed (and cuda.manual_seed_all) set together"
        ),
    ),
    tags=("data", "reproducibility", "seed", "random", "numpy"),
    references=(
        "https://pytorch.org/docs/stable/notes/randomness.html",
        # the 1.9 notes: sections 'Python' and 'Random number generators in other libraries'
        "https://pytorch.org/docs/1.9.1/_sources/notes/randomness.rst.txt",
        "https://pytorch.org/docs/stable/generated/torch.manual_seed",  # "on all devices"
        # #56488: DataLoader workers seed NumPy too
        "https://github.com/pytorch/pytorch/commit/aec83ff45ebd2cb3d4890cc97bffb1f367386392",
    ),
)
