# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Resuming from the weights alone restarts Adam
#
# A long training job stops (a preempted node, a crash, a time limit) and you restart it from
# the last checkpoint, which holds `model.state_dict()`. The loss, which was coming down
# smoothly, jumps right after the restart and takes a while to recover; the resumed run never
# quite matches one that was not interrupted. The weights were restored, but the optimizer was
# built fresh: Adam's running averages of the gradient and of its square, and its step count,
# all started over from zero.

# %%

import copy

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small regression trained with Adam for six steps, interrupted after three. The checkpoint
# holds the model's weights only; the restarted job builds the model and the optimizer as at
# the start, loads the weights and carries on from step 3. The case records how far the first
# step after the restart moved each parameter, and the final parameters.

# %%
STEPS, SPLIT, LR = 6, 3, 0.1
TRUE_W = [[1.0], [-2.0], [0.5]]


def batch(step, device):
    """Batch number `step`, the same in every run: the data a loader would replay."""
    x = torch.randn(8, 3, generator=torch.Generator().manual_seed(step))
    return x.to(device), (x @ torch.tensor(TRUE_W) + 0.3).to(device)


def new_job(device):
    """What the training script builds when it starts: the model and its optimizer."""
    with seeded(0):
        model = nn.Linear(3, 1).to(device)
    return model, torch.optim.Adam(model.parameters(), lr=LR)


def train(model, opt, steps, device):
    for step in steps:
        x, y = batch(step, device)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


def flat(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])


def interrupted_run(device, save, restore, resume_at=SPLIT):
    model, opt = new_job(device)
    train(model, opt, range(SPLIT), device)
    # the checkpoint as torch.save and torch.load would give it back: a copy of what was saved
    checkpoint = copy.deepcopy(save(model, opt))
    # --- the job is killed here and started again ---
    model, opt = new_job(device)
    restore(model, opt, checkpoint)
    before = flat(model)
    train(model, opt, range(resume_at, resume_at + 1), device)
    first_step = flat(model) - before
    train(model, opt, range(resume_at + 1, resume_at + STEPS - SPLIT), device)
    return {"first_step_after_resume": first_step, "final": flat(model)}


def broken(device):
    return interrupted_run(
        device,
        save=lambda model, opt: model.state_dict(),
        restore=lambda model, opt, ckpt: model.load_state_dict(ckpt),
    )


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Adam keeps, for every parameter, an exponential average of past gradients (`exp_avg`), one
# of their squares (`exp_avg_sq`) and a step counter used to correct the bias of both
# averages early on. They live in the optimizer's state, which `model.state_dict()` does not
# contain. A fresh optimizer starts them at zero, and with the bias correction its first step
# is `lr * g / (|g| + eps)`: every parameter moves by almost exactly `lr`, in the direction of
# its gradient's sign, however small or noisy that gradient is. That is the jump after the
# restart (here every element of the first step after resuming has size 0.1 = `lr`), and the
# averages then need many steps to become meaningful again. SGD with momentum loses its
# momentum buffer the same way; plain SGD has no state and would not notice.
#
# ## The fix
# Save the optimizer's `state_dict()` next to the model's (and the scheduler's, the epoch and
# the step, the `GradScaler`'s when using AMP) in one checkpoint dictionary, and load each
# into the freshly built object before training resumes. Build the optimizer over the model's
# parameters first, then call `optimizer.load_state_dict`: the state is matched to the
# parameters by their order.


# %%
def fixed(device):
    return interrupted_run(
        device,
        save=lambda model, opt: {"model": model.state_dict(), "optimizer": opt.state_dict()},
        restore=lambda model, opt, ckpt: (model.load_state_dict(ckpt["model"]), opt.load_state_dict(ckpt["optimizer"])),
    )


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# PyTorch's recipe "Saving and loading a general checkpoint in PyTorch" (and the same section
# of the "Saving and Loading Models" tutorial) says a checkpoint meant for resuming must hold
# more than the model's `state_dict`: the optimizer's too, because it carries buffers and
# parameters updated as training runs. Projects that skipped it received bug reports such as
# NVlabs/stylegan2-ada-pytorch#108, whose commenter notes that without the restored Adam state
# the first update after resuming moves every weight by the same amount up to its sign (what
# this case measures), and NM512/dreamerv3-torch#38 ("Resuming training resets optimizer
# parameters"). pytorch/examples#141 proposed adding the optimizer to the checkpoint of the
# ImageNet example. The behaviour is the design of `state_dict`, unchanged in every
# release.

# %% [markdown]
# ## How the harness checks it
# A resumed run that ends somewhere else is not always this pitfall. Restoring the optimizer
# correctly but restarting the data from the first batch (a loader that does not remember
# where it was) also ends on other weights than the uninterrupted run, yet the first step
# after the restart is an ordinary Adam step, not a fresh one of size `lr` in every element,
# so the symptom refuses it. The fix's check compares with a run that was never interrupted.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The first step after resuming moved every parameter by `lr` (to 1e-4 relative): Adam's
    first step from a zeroed state, `lr * g / |g|`."""
    if run.error is not None:
        return False
    step = run.value["first_step_after_resume"].abs().cpu()
    return bool(torch.allclose(step, torch.full_like(step, LR), rtol=1e-4, atol=0.0))


def near_miss(device):
    return interrupted_run(
        device,
        save=lambda model, opt: {"model": model.state_dict(), "optimizer": opt.state_dict()},
        restore=lambda model, opt, ckpt: (model.load_state_dict(ckpt["model"]), opt.load_state_dict(ckpt["optimizer"])),
        resume_at=0,  # the data loader starts over from the first batch
    )


def check(run, device):
    """Both the first step after resuming and the final parameters equal those of the same
    training never interrupted (no checkpoint at all)."""
    model, opt = new_job(device)
    train(model, opt, range(SPLIT), device)
    before = flat(model)
    train(model, opt, range(SPLIT, SPLIT + 1), device)
    expected_step = flat(model) - before
    train(model, opt, range(SPLIT + 1, STEPS), device)
    torch.testing.assert_close(run.value["first_step_after_resume"], expected_step)
    torch.testing.assert_close(run.value["final"], flat(model))


CASE = Case(
    id="resume-without-optimizer-state",
    title="Resuming from the weights alone restarts Adam",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Right after resuming from a checkpoint the loss jumps: Adam restarted with empty state.",
    # The optimizer's state has never been part of the model's state_dict.
    affects=(Affects("*", reason="the optimizer's state lives outside model.state_dict() by design"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch recipe: Saving and loading a general checkpoint in PyTorch",
            url="https://pytorch.org/tutorials/recipes/recipes/saving_and_loading_a_general_checkpoint.html",
        ),
        Source(
            title="NVlabs/stylegan2-ada-pytorch#108: restoring optimizer state during checkpoint resuming",
            url="https://github.com/NVlabs/stylegan2-ada-pytorch/issues/108",
        ),
        Source(
            title="NM512/dreamerv3-torch#38: Resuming training resets optimizer parameters",
            url="https://github.com/NM512/dreamerv3-torch/issues/38",
        ),
    ),
    tags=("checkpoint", "resume", "optimizer", "adam", "state_dict"),
    references=(
        "https://pytorch.org/tutorials/beginner/saving_loading_models.html",
        "https://github.com/pytorch/examples/pull/141",  # ImageNet example: save/load optimizer state
        "https://pytorch.org/docs/stable/generated/torch.optim.Adam.html",
    ),
)
