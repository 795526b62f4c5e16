# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `verbose=True` on a learning-rate scheduler
#
# A training script builds its scheduler with `StepLR(optimizer, step_size=1, gamma=0.1,
# verbose=True)` so that the log shows "Adjusting learning rate of group 0 to ..." at every
# step. On 1.13 to 2.1 it does. After an upgrade to 2.2 the lines are gone and a
# `UserWarning` says "The verbose parameter is deprecated. Please use get_last_lr() to access
# the learning rate". From 2.7 the constructor raises
# `TypeError: ... got an unexpected keyword argument 'verbose'` and the script does not start.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with seeded(0):
        model = nn.Linear(2, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1, verbose=True)
    lrs = []
    for _ in range(3):
        optimizer.step()
        scheduler.step()  # 1.13-2.1 print "Adjusting learning rate of group 0 to ..."
        lrs.append(optimizer.param_groups[0]["lr"])
    return torch.tensor(lrs, dtype=torch.float64)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `verbose` printed one line per parameter group at each step, straight to stdout. The
# maintainers preferred one logging mechanism to scattered `print` calls (#100847), so
# #111302 (2.2) deprecated the parameter and, in the same change, stopped printing: from 2.2
# `verbose=True` is accepted, warns, and does nothing. #147301 (2.7) finished the deprecation
# and removed the parameter and `print_lr()`.
#
# ## The fix
# Drop `verbose` and print the rate yourself with `scheduler.get_last_lr()`, which every
# release from 1.13 on has. The check computes the schedule by hand: 0.1 * 0.1^k after k
# steps.


# %%
def fixed(device):
    with seeded(0):
        model = nn.Linear(2, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
    lrs = []
    for epoch in range(3):
        optimizer.step()
        scheduler.step()
        print(f"epoch {epoch}: lr {scheduler.get_last_lr()[0]:.4e}")  # the log line verbose used to print
        lrs.append(scheduler.get_last_lr()[0])
    return torch.tensor(lrs, dtype=torch.float64)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#111302 ("Deprecated verbose parameter in LR schedulers", October 2023, in
# 2.2) carries a BC-breaking note: `verbose` is deprecated and no longer prints; use
# `get_last_lr()`. pytorch/pytorch#147301 ("Remove deprecate method and attirbute in
# `LRScheduler`", February 2025, in 2.7) removed `print_lr` and the `verbose` argument, with a
# note showing the 2.6 and the 2.7 spelling. Downstream, MannLabs/alphadia#248 reported the
# warning in its logs; lightly-ai/lightly#1813 and atomistic-machine-learning/schnetpack#710
# removed `verbose` from their schedulers, and PaddlePaddle/PaConvert#575 dropped it from its
# converter "as removed in torch 2.7.0".
#
# Observed here on CPU: quiet (and printing) on 1.13.1, 2.0.1 and 2.1.2; the `UserWarning` (and no
# printing) on 2.2.2, 2.4.1 and 2.6.0; the `TypeError` on 2.7.1, 2.9.1, 2.10.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# The schedulers have another `UserWarning` that names `get_last_lr()`: calling
# `scheduler.get_lr()` outside of `step()` warns, on every release, that the last learning
# rate should be read with `get_last_lr()`. It is about reading the rate, not about `verbose`.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """From 2.7 the constructor rejects verbose (TypeError); from 2.2 to 2.6 it warns that
    verbose is deprecated."""
    if run.raised(TypeError, r"unexpected keyword argument 'verbose'"):
        return "TypeError"
    if run.warned(UserWarning, r"verbose parameter is deprecated"):
        return "UserWarning"
    return False


def near_miss(device):
    with seeded(0):
        model = nn.Linear(2, 2).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.1)
    return scheduler.get_lr()  # UserWarning: ... please use `get_last_lr()`


def check(run, device):
    """The rates are 0.1 * 0.1**k for k = 1, 2, 3, and building the scheduler emitted no
    warning."""
    expected = torch.tensor([0.1 * 0.1**k for k in (1, 2, 3)], dtype=torch.float64)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the scheduler warned: {run.warnings[0].message}"


CASE = Case(
    id="lr-scheduler-verbose",
    title="verbose=True on a learning-rate scheduler",
    kind="error",
    symptom_category="error",
    symptom_line="verbose=True on a learning-rate scheduler warns, then raises on a newer torch.",
    affects=(
        Affects(
            versions=">=2.7",
            form="TypeError",
            reason="the verbose parameter is removed (observed 2.7.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/147301",
        ),
        Affects(
            versions=">=2.2,<2.7",
            form="UserWarning",
            reason="verbose is deprecated: it warns and prints nothing (observed 2.2.2 to 2.6.0)",
            issue="https://github.com/pytorch/pytorch/pull/111302",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.2.0").at(
            "Backwards Incompatible Changes: the verbose parameter of LRScheduler is deprecated and no longer prints (#111302)"
        ),
        release_notes("2.7.0").at(
            "Backwards Incompatible Changes: LRScheduler.print_lr and the verbose kwarg are removed (#147301)"
        ),
    ),
    tags=("upgrade", "lr_scheduler", "optim", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/111302",  # deprecation, printing stops (2.2)
        "https://github.com/pytorch/pytorch/pull/147301",  # removal (2.7)
        "https://github.com/MannLabs/alphadia/issues/248",  # downstream: the warning in a pipeline's log
        "https://github.com/lightly-ai/lightly/pull/1813",  # downstream fix: drop verbose
        "https://github.com/atomistic-machine-learning/schnetpack/pull/710",  # downstream fix
    ),
)
