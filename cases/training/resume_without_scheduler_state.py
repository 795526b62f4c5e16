# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Resuming without the scheduler's state replays the schedule
#
# Your checkpoint holds the model and the optimizer, as the tutorials say. After a restart the
# first step looks right, but the learning rate plotted in your logs then jumps back up to
# values from the beginning of training and decays again from there, as if the run had just
# started: the warm-up or decay schedule is replayed from the start. The learning-rate scheduler
# was built fresh, and its step counter began again at zero.

# %%

import copy

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# SGD with momentum and a `LambdaLR` that decays the learning rate linearly over six steps
# (`lr * (1 - step / 6)`), stepped once per batch. The job is interrupted after three steps; the
# checkpoint holds the model and the optimizer. The restarted script builds model, optimizer
# and scheduler as at the start, then loads the checkpoint. The case records the learning rate
# each of the six steps used.

# %%
STEPS, SPLIT, LR = 6, 3, 0.1


def decay(step):
    return 1.0 - step / STEPS


def batch(step, device):
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(step))
    return x.to(device), x.sum(dim=1, keepdim=True).to(device)


def new_job(device):
    """What the training script builds when it starts."""
    with seeded(0):
        model = nn.Linear(3, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    return model, opt, torch.optim.lr_scheduler.LambdaLR(opt, decay)


def train(model, opt, sched, steps, device, lrs):
    for step in steps:
        x, y = batch(step, device)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        lrs.append(opt.param_groups[0]["lr"])  # the rate this step uses
        opt.step()
        sched.step()


def interrupted_run(device, save, restore):
    lrs = []
    model, opt, sched = new_job(device)
    train(model, opt, sched, range(SPLIT), device, lrs)
    # the checkpoint as torch.save and torch.load would give it back: a copy of what was saved
    checkpoint = copy.deepcopy(save(model, opt, sched))
    # --- the job is killed here and started again ---
    model, opt, sched = new_job(device)
    restore(model, opt, sched, checkpoint)
    train(model, opt, sched, range(SPLIT, STEPS), device, lrs)
    return lrs


def save_model_and_optimizer(model, opt, sched):
    return {"model": model.state_dict(), "optimizer": opt.state_dict()}


def restore_model_and_optimizer(model, opt, sched, ckpt):
    model.load_state_dict(ckpt["model"])
    opt.load_state_dict(ckpt["optimizer"])


def broken(device):
    return interrupted_run(device, save_model_and_optimizer, restore_model_and_optimizer)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A scheduler is an object with state of its own: `last_epoch` counts the `scheduler.step()`
# calls so far, and the schedule is a function of that count (`LambdaLR` sets
# `lr = base_lr * lambda(last_epoch)`). The optimizer's `state_dict` does carry the current
# `lr` of each parameter group, so the first step after the restart uses the right value. But
# the scheduler built at startup believes it is at step 0, and its next `step()` writes
# `base_lr * lambda(1)` into the optimizer: the learning rate goes back up from 0.05 to
# 0.083 and the decay is replayed from the start (here 0.1, 0.083, 0.067, then 0.05, 0.083,
# 0.067 instead of 0.05, 0.033, 0.017). With a warm-up schedule the restart repeats the
# warm-up; with a cosine schedule the rate climbs back to its peak.
#
# ## The fix
# Save `scheduler.state_dict()` with the rest of the checkpoint and call
# `scheduler.load_state_dict(...)` after building the scheduler on the restored optimizer.
# (A `LambdaLR` does not store the lambda itself, only the step count and rates, so the
# restarted script must define the same schedule.)


# %%
def fixed(device):
    def save(model, opt, sched):
        return {**save_model_and_optimizer(model, opt, sched), "scheduler": sched.state_dict()}

    def restore(model, opt, sched, ckpt):
        restore_model_and_optimizer(model, opt, sched, ckpt)
        sched.load_state_dict(ckpt["scheduler"])

    return interrupted_run(device, save, restore)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The report comes back from many projects whose checkpoints held the model and optimizer
# only: in KaiyangZhou/deep-person-reid#270 the learning rate after resuming did not carry on
# from where it stopped but decayed again from its initial 0.0015, and the maintainer then
# added the scheduler to the resume code; lightly-ai/lightly-train#301 fixes a resume where
# the warm-up schedule restarted because `last_epoch` was back at -1. The
# `LRScheduler.state_dict` / `load_state_dict` pair exists for this. PyTorch's checkpoint
# recipe names the optimizer's state as what must be saved beyond the model and leaves the
# rest of the training state to the reader, which is where the scheduler tends to be
# forgotten. Schedulers have kept their step count outside the optimizer in every release.

# %% [markdown]
# ## How the harness checks it
# The symptom is the replay: after the restart, the rates repeat those of steps 1 and 2 of
# the original run. Changing the configuration on purpose when resuming (a smaller base
# learning rate for the second half, with the scheduler restored) also gives rates unlike the
# uninterrupted run, but no replay of earlier values, so the symptom refuses it. The fix is
# checked against the schedule written out by hand, `0.1 * (1 - step / 6)`.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """After the restart, the rates of steps 4 and 5 equal those of steps 1 and 2: the schedule
    was replayed from its start."""
    if run.error is not None:
        return False
    lrs = run.value
    replayed = lrs[SPLIT + 1 :]
    return len(lrs) == STEPS and all(abs(a - b) < 1e-12 for a, b in zip(replayed, lrs[1 : 1 + len(replayed)]))


def near_miss(device):
    def save(model, opt, sched):
        return {**save_model_and_optimizer(model, opt, sched), "scheduler": sched.state_dict()}

    def restore(model, opt, sched, ckpt):
        restore_model_and_optimizer(model, opt, sched, ckpt)
        state = dict(ckpt["scheduler"])
        state["base_lrs"] = [b / 2 for b in state["base_lrs"]]  # resume with half the base rate
        sched.load_state_dict(state)

    return interrupted_run(device, save, restore)


def check(run, device):
    """The six rates follow `LR * (1 - step / STEPS)`, computed by hand, across the restart."""
    expected = [LR * (1.0 - step / STEPS) for step in range(STEPS)]
    assert len(run.value) == STEPS, run.value
    for step, (got, want) in enumerate(zip(run.value, expected)):
        assert abs(got - want) < 1e-9, f"step {step}: lr {got}, expected {want}"


CASE = Case(
    id="resume-without-scheduler-state",
    title="Resuming without the scheduler's state replays the schedule",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="After resuming, the learning rate climbs back up and the schedule replays from its start.",
    # The scheduler's step count lives in the scheduler, not in the optimizer's state_dict.
    affects=(Affects("*", reason="a scheduler's step count is not part of the optimizer's state_dict"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="KaiyangZhou/deep-person-reid#270: Resume training, how to let the learning rate "
            "drop on the original basis?",
            url="https://github.com/KaiyangZhou/deep-person-reid/issues/270",
        ),
        Source(
            title="lightly-ai/lightly-train#301: Resume scheduler properly",
            url="https://github.com/lightly-ai/lightly-train/pull/301",
        ),
        Source(
            title="PyTorch recipe: Saving and loading a general checkpoint in PyTorch",
            url="https://pytorch.org/tutorials/recipes/recipes/saving_and_loading_a_general_checkpoint.html",
        ),
    ),
    tags=("checkpoint", "resume", "lr_scheduler", "state_dict"),
    references=(
        "https://pytorch.org/docs/stable/generated/torch.optim.lr_scheduler.LambdaLR.html",
        "https://pytorch.org/docs/stable/optim.html#how-to-adjust-learning-rate",
    ),
)
