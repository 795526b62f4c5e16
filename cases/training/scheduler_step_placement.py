# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `scheduler.step()` in the batch loop
#
# You set up "decay the learning rate by 10× every epoch" with `StepLR(step_size=1,
# gamma=0.1)` and call `scheduler.step()` at the top of the loop over batches, before
# `optimizer.step()` (older tutorials put it at the top of the *epoch* loop). No error; one
# `UserWarning` at the first batch, about the order of the two calls. But the learning rate
# is already 10× smaller for the very first batch, and 10× smaller again at every batch: after
# one epoch it is 10^(number of batches)× smaller, and the model stops learning almost at once.

# %%
import math

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Three epochs of four batches; the learning rate used by every optimizer step is recorded.
# The model is a single weight: only the schedule matters here. The scheduler is stepped at
# the top of every batch.

# %%
EPOCHS, BATCHES, BASE_LR, GAMMA = 3, 4, 0.1, 0.1


def setup(device):
    w = torch.zeros(1, device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=BASE_LR)
    return w, opt, torch.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=GAMMA)


def train_step(w, opt):
    opt.zero_grad()
    (w - 1.0).pow(2).sum().backward()
    opt.step()
    return opt.param_groups[0]["lr"]  # the rate this step used


def broken(device):
    w, opt, scheduler = setup(device)
    used = []
    for epoch in range(EPOCHS):
        for batch in range(BATCHES):
            scheduler.step()  # once per batch, and before the optimizer's step
            used.append(train_step(w, opt))
    return used


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Two things go wrong, and only one of them is announced.
#
# A scheduler has no idea what an epoch is. It counts its own `step()` calls in
# `last_epoch`, and `step_size`, `milestones`, `T_max` and friends are all measured in those
# calls. Called once per batch, `StepLR(step_size=1, gamma=0.1)` multiplies the rate by 0.1
# at every batch: 0.01, 0.001, 0.0001, 1e-5 within the first epoch here, and 1e-13 by the end
# of the third. Nothing warns about that. Some schedulers are *meant* to be stepped per batch
# (`OneCycleLR`, a warm-up over N iterations): then their lengths must be given in batches.
# What matters is that the call count and the unit of the schedule's arguments agree.
#
# The order: since torch 1.1 the constructor already sets the first value, and each
# `scheduler.step()` moves to the next one. Called before `optimizer.step()` (the order
# required before 1.1), the first step of the scheduler runs before any optimizer step, so
# the first value of the schedule is never used: the first batch already runs at 0.01, not
# 0.1. That is the half torch notices: it warns once ("Detected call of `lr_scheduler.step()`
# before `optimizer.step()`", a `UserWarning`). Following the warning alone (swapping the two
# calls inside the batch loop) silences it and leaves the per-batch decay in place.
#
# ## The fix
# Step the scheduler once per epoch, after that epoch's optimizer steps (or, for a
# per-iteration schedule, give it its lengths in iterations).


# %%
def fixed(device):
    w, opt, scheduler = setup(device)
    used = []
    for epoch in range(EPOCHS):
        for batch in range(BATCHES):
            used.append(train_step(w, opt))
        scheduler.step()  # once per epoch, after its optimizer steps
    return used


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's notes on the optimizer show the `MultiStepLR` example from the documentation
# (`scheduler.step()` once per epoch, after training and validation) and add the reason:
# each call advances the scheduler's epoch counter by one, so the call belongs in the loop
# over epochs.
#
# Upstream, the "How to adjust learning rate" section of the `torch.optim` docs gives the same
# template and warns that since 1.1.0 the scheduler must be stepped after the optimizer, or the
# first value of the schedule is skipped. pytorch/pytorch#20124 (May 2019) describes that 1.1
# order change as BC-breaking and proposes the warning that torch now emits; it was worked out in
# #20203 and #21460 (May–June 2019), after 1.1.0 had shipped, and downstream reports show it on
# 1.2.0 (XPixelGroup/BasicSR#206). This case checks both halves together, so its range starts at
# 1.2 (before it, the same code decayed per batch without a word); the version matrix observes it
# from 1.13.1 on. The per-call counting is older: the 0.4.0 `_LRScheduler` already primes itself
# with `self.step(last_epoch + 1)` in its constructor, and the pre-1.1 `step()` (seen in a mirror
# of the old source) moves `last_epoch` on by one whenever it is called without an epoch.

# %% [markdown]
# ## How the harness checks it
#
# Another scheduler mistake that also warns is not this one. Old code that passes the epoch,
# `scheduler.step(epoch)` once per epoch with the 0-based index, gets a deprecation
# `UserWarning` and a schedule one epoch late (the second epoch still runs at BASE_LR), but
# no per-batch decay and no order warning: the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1

ORDER_WARNING = r"lr_scheduler\.step\(\)` before `optimizer\.step\(\)"


def symptom(run):
    """Both halves in one run: the k-th optimizer step used BASE_LR·GAMMA^(k+1) (decayed per
    batch, the first value skipped), and torch warned that the scheduler stepped first."""
    if run.error is not None or not isinstance(run.value, list) or len(run.value) != EPOCHS * BATCHES:
        return False
    per_batch_skipping_first = [BASE_LR * GAMMA ** (k + 1) for k in range(EPOCHS * BATCHES)]
    values = all(math.isclose(lr, want, rel_tol=1e-9) for lr, want in zip(run.value, per_batch_skipping_first))
    return values and run.warned(UserWarning, ORDER_WARNING)


def near_miss(device):
    w, opt, scheduler = setup(device)
    used = []
    for epoch in range(EPOCHS):
        for batch in range(BATCHES):
            used.append(train_step(w, opt))
        scheduler.step(epoch)  # deprecated argument, off by one
    return used


def check(run, device):
    """By hand: every batch of epoch e uses BASE_LR · GAMMA^e, the first epoch the base rate."""
    expected = [BASE_LR * GAMMA**epoch for epoch in range(EPOCHS) for _ in range(BATCHES)]
    torch.testing.assert_close(
        torch.tensor(run.value, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64)
    )


CASE = Case(
    id="scheduler-step-placement",
    title="scheduler.step() in the batch loop",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The learning rate drops ten times per batch instead of per epoch.",
    # A scheduler counts its own step() calls; the pre-1.1 source already advanced last_epoch
    # by one per call (0.4.0 is the oldest source this project read), and no release changed
    # that. 1.1.0 changed the *order* of the two step() calls (a call before the optimizer's
    # skips the first value), and the warning about that order came after 1.1.0: the symptom
    # checked here (per-batch decay from the second value on, with the warning) starts there.
    # Observed by the matrix from 1.13.1 on.
    affects=(
        Affects(
            ">=1.2",
            since="the order warning, asked for in pytorch/pytorch#20124 after 1.1.0 "
            "shipped and added in #20203/#21460 (May-June 2019), is reported on 1.2.0 in "
            "XPixelGroup/BasicSR#206",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("Optimizer notes: MultiStepLR, scheduler.step() belongs in the epoch loop"),),
    tags=("training", "optimizer", "lr_scheduler", "learning_rate"),
    references=(
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
        "https://pytorch.org/docs/0.4.0/_modules/torch/optim/lr_scheduler.html",  # the 0.4.0 _LRScheduler
        "https://android.googlesource.com/platform/external/pytorch/+/4cca286d9e/torch/optim/lr_scheduler.py",  # pre-1.1 step()
        "https://github.com/pytorch/pytorch/issues/20124",  # 1.1's order change and the warning it led to
        "https://github.com/pytorch/pytorch/pull/21460",  # the warning's final form (June 2019)
        "https://github.com/XPixelGroup/BasicSR/issues/206",  # the warning seen on torch 1.2.0
    ),
)
