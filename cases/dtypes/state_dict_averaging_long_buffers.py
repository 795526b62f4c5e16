# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Averaging checkpoints in place trips on BatchNorm's integer counter
#
# You average two checkpoints of the same model (two seeds, two epochs) by looping over the
# state dict: add the other model's tensor, halve it. The loop dies half way with
# `RuntimeError: result type Float can't be cast to the desired output type Long`. The key it
# dies on is `num_batches_tracked`, a BatchNorm buffer you never created yourself, and the
# entries before it have already been modified in the model that owns them.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Two BatchNorm layers stand for two checkpoints of one model; their values are set by hand so
# the average is easy to check.


# %%
def two_checkpoints(device):
    with seeded(0):
        a, b = nn.BatchNorm1d(2).to(device), nn.BatchNorm1d(2).to(device)
    with torch.no_grad():
        for bn, w, mean, batches in ((a, 1.0, 2.0, 10), (b, 3.0, 4.0, 20)):
            bn.weight.fill_(w)
            bn.running_mean.fill_(mean)
            bn.num_batches_tracked.fill_(batches)
    return a, b


def broken(device):
    a, b = two_checkpoints(device)
    avg, other = a.state_dict(), b.state_dict()
    for key in avg:  # weight, bias, running_mean, running_var, num_batches_tracked
        avg[key] += other[key]
        avg[key] *= 0.5
    return avg


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A state dict is not only parameters: BatchNorm also stores buffers, and since 0.4.1 one of
# them is `num_batches_tracked`, an int64 count of the batches seen in training (it is used
# when `momentum=None`). `counter *= 0.5` asks for a float result to be written into an int64
# tensor, which type promotion forbids for in-place ops (see `inplace-op-cannot-promote`).
#
# The error is the visible half. `state_dict()` returns the module's own tensors, detached but
# sharing storage, so the in-place `+=`/`*=` on the earlier keys already overwrote the
# weights and running statistics of model `a` before the loop reached the counter. Before
# 1.3 the loop ran through and truncated the counter silently.
#
# ## The fix
# Build a new dict instead of editing one in place, and decide per entry: average floating
# point tensors, and carry integer buffers over (a count of batches has no meaningful mean;
# take one model's, or the maximum).


# %%
def fixed(device):
    a, b = two_checkpoints(device)
    sd_a, sd_b = a.state_dict(), b.state_dict()
    avg = {key: (sd_a[key] + sd_b[key]) / 2 if sd_a[key].is_floating_point() else sd_a[key].clone() for key in sd_a}
    with seeded(0):
        merged = nn.BatchNorm1d(2).to(device)
    merged.load_state_dict(avg)
    return {"merged": merged.state_dict(), "a.weight after": a.weight.detach()}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes list the message `result type Float can't be cast to the desired output type Long`
# and name its cause: BatchNorm's `num_batches_tracked` in the state dict is an int64. The buffer
# was added by pytorch/pytorch#6445 for the cumulative average (`momentum=None`); the "missing key
# num_batches_tracked" reports of 2018 date it to 0.4.1. The in-place refusal comes from type
# promotion, pytorch/pytorch#22273 (released in 1.3), whose description says that `int_tensor *=
# float` now raises. The project's catalogue (its entry for `inplace-op-cannot-promote`) dates
# type promotion "since 1.5"; that is too late: the PR was merged in September 2019, before the
# 1.3.0 release, and the 1.3.1 release tracker (pytorch/pytorch#28919) was opened to fix
# correctness issues in "v1.3.0's Type Promotion", so the lower bound here is 1.3 (read there, not
# observed: the version matrix starts at 1.13.1).

# %% [markdown]
# ## How the harness checks it
#
# The same loop fails differently when the two checkpoints are not of the same model: a
# BatchNorm over 2 features and one over 3 cannot be added, and in-place `+=` raises a
# RuntimeError about sizes. That is a mismatched checkpoint, not the integer counter.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The in-place halving refuses to put a float result into the int64 counter."""
    return run.raised(RuntimeError, r"can't be cast to the desired output type")


def near_miss(device):
    with seeded(0):
        a, b = nn.BatchNorm1d(2).to(device), nn.BatchNorm1d(3).to(device)
    avg, other = a.state_dict(), b.state_dict()
    for key in avg:
        avg[key] += other[key]  # the size of tensor a (2) must match the size of tensor b (3)
        avg[key] *= 0.5
    return avg


def check(run, device):
    """The merged model's entries, worked out by hand from the values set in two_checkpoints:
    weight (1+3)/2, bias 0, running_mean (2+4)/2, running_var 1, the int64 counter taken from
    `a` (10); and model `a`'s own weight still 1 (the source models were left untouched)."""
    merged = {k: v.cpu() for k, v in run.value["merged"].items()}
    torch.testing.assert_close(merged["weight"], torch.tensor([2.0, 2.0]))
    torch.testing.assert_close(merged["bias"], torch.tensor([0.0, 0.0]))
    torch.testing.assert_close(merged["running_mean"], torch.tensor([3.0, 3.0]))
    torch.testing.assert_close(merged["running_var"], torch.tensor([1.0, 1.0]))
    assert merged["num_batches_tracked"].dtype == torch.int64
    assert merged["num_batches_tracked"].item() == 10
    torch.testing.assert_close(run.value["a.weight after"].cpu(), torch.tensor([1.0, 1.0]))


CASE = Case(
    id="state-dict-averaging-long-buffers",
    title="Averaging checkpoints in place trips on BatchNorm's integer counter",
    kind="error",
    symptom_category="error",
    symptom_line="Averaging two checkpoints in place fails on BatchNorm's integer counter.",
    # The error needs type promotion's in-place check (1.3, #22273); num_batches_tracked exists
    # since 0.4.1. Before 1.3 the same loop silently truncated the counter instead. The matrix
    # observes it from 1.13.1 on.
    affects=(
        Affects(
            ">=1.3",
            since="PR #22273 (merged September 2019), released in 1.3.0: its "
            "description says int_tensor *= float now raises; the v1.3.1 tracker #28919 "
            "names 1.3.0's type promotion",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Troubleshooting': result type Float can't be cast to the desired output type Long, from num_batches_tracked"
        ),
    ),
    tags=("dtypes", "state_dict", "batchnorm", "inplace", "checkpoint"),
    references=(
        "https://github.com/pytorch/pytorch/pull/22273",  # int_tensor *= float raises since 1.3
        "https://github.com/pytorch/pytorch/pull/6445",  # adds the num_batches_tracked buffer
        "https://github.com/pytorch/pytorch/issues/28919",  # v1.3.1 tracker: fixes to 1.3.0's promotion
    ),
)
