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
# gamma=0.1)` and call `scheduler.step()` next to `optimizer.step()`, inside the loop over
# batches. No error, no warning; but after the first epoch the learning rate is not 10×
# smaller, it is 10^(number of batches)× smaller, and the model stops learning almost at
# once. (Calling it *before* `optimizer.step()` is a different mistake, and that one warns.)

# %%
import torch

from harness import Case, observe
from harness.sources import S1

CASE = Case(
    id="scheduler-step-placement",
    title="scheduler.step() in the batch loop",
    kind="silent",
    # A scheduler counts its own step() calls; the pre-1.1 source already advanced last_epoch
    # by one per call (0.4.0 is the oldest release this project saw it in), and no release
    # changed that. 1.1.0 changed the *order* of the two step() calls (the warning below),
    # not the counting. Observed on 2.13.0.
    affects=">=0.4",
    devices=("cpu", "cuda"),
    sources=(S1.at("Optimizer notes: MultiStepLR, scheduler.step() belongs in the epoch loop"),),
    tags=("training", "optimizer", "lr_scheduler", "learning_rate"),
    references=(
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
        "https://pytorch.org/docs/0.4.0/_modules/torch/optim/lr_scheduler.html",  # the 0.4.0 _LRScheduler
        "https://android.googlesource.com/platform/external/pytorch/+/4cca286d9e/torch/optim/lr_scheduler.py",  # pre-1.1 step()
        "https://github.com/pytorch/pytorch/issues/20124",  # 1.1's order change and the warning it led to
    ),
)

# %% [markdown]
# ## The broken code
# Three epochs of four batches; the learning rate used by every optimizer step is recorded.
# The model is a single weight: only the schedule matters here.

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
            used.append(train_step(w, opt))
            scheduler.step()  # once per batch: "epoch" now means "batch"
    return used


def symptom(run):
    """The rate falls within the first epoch, and the second epoch starts at BASE_LR·GAMMA^BATCHES."""
    if run.error is not None:
        return False
    used = run.value
    first_epoch_constant = all(lr == used[0] for lr in used[:BATCHES])
    second_epoch_start = used[BATCHES]
    return not first_epoch_constant and abs(second_epoch_start - BASE_LR * GAMMA**BATCHES) < 1e-12


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A scheduler has no idea what an epoch is. It counts its own `step()` calls in
# `last_epoch`, and `step_size`, `milestones`, `T_max` and friends are all measured in those
# calls. Called once per batch, `StepLR(step_size=1, gamma=0.1)` multiplies the rate by 0.1
# at every batch: 0.1, 0.01, 0.001, 0.0001 within the first epoch, and 1e-12 by the end of
# the third. Some schedulers are *meant* to be stepped per batch (`OneCycleLR`, a warm-up
# over N iterations): then their lengths must be given in batches. What matters is that the
# call count and the unit of the schedule's arguments agree.
#
# The other half of the catalogue row: calling `scheduler.step()` *before*
# `optimizer.step()` (the order required before torch 1.1) makes the first `step()` of
# the scheduler run before any optimizer step; torch warns once ("Detected call of
# `lr_scheduler.step()` before `optimizer.step()`", a `UserWarning`) and the first value of
# the schedule is skipped. That one is visible; the per-batch placement checked here is not.
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
    # By hand: every batch of epoch e uses BASE_LR · GAMMA^e.
    expected = [BASE_LR * GAMMA**epoch for epoch in range(EPOCHS) for _ in range(BATCHES)]
    torch.testing.assert_close(torch.tensor(used, dtype=torch.float64), torch.tensor(expected, dtype=torch.float64))
    return used


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

    def stepped_first(device):  # the warning form: the scheduler steps before the optimizer
        w, opt, scheduler = setup(device)
        scheduler.step()
        return train_step(w, opt)

    print(observe(stepped_first, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's notes on the optimizer show the `MultiStepLR` example from the documentation
# (`scheduler.step()` once per epoch, after training and validation) and add the reason:
# each call advances the scheduler's epoch counter by one, so the call belongs in the loop
# over epochs.
#
# Upstream, the "How to adjust learning rate" section of the `torch.optim` docs gives the
# same template and warns that since 1.1.0 the scheduler must be stepped after the
# optimizer, or the first value of the schedule is skipped. pytorch/pytorch#20124 (May 2019)
# describes that 1.1 order change as BC-breaking and proposes the warning that torch now
# emits. The per-call counting is older: the 0.4.0 `_LRScheduler` already primes itself
# with `self.step(last_epoch + 1)` in its constructor, and the pre-1.1 `step()` (seen in a
# mirror of the old source) moves `last_epoch` on by one whenever it is called without an
# epoch. Observed by this project on torch 2.13.0 (CPU); the CUDA side was not observed by
# this project's runs (the schedule is plain Python arithmetic).
