# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A Python loop over slices instead of one broadcast op
#
# You need to subtract a per-channel mean (shape `[C]`) from a batch of feature maps (shape
# `[N, C, H, W]`). The shapes do not match, so you write a loop (or a list comprehension) over the
# channels, subtract each channel's mean, and `torch.stack` the pieces back together. The answer
# is right. But the step is slow, and it gets slower with every channel you add, especially on a
# GPU: the profiler shows one subtraction (plus two indexing ops) per channel where one
# subtraction for the whole batch would do.

# %%
from typing import NamedTuple

import torch

from torch_pitfalls import observe, ops_called

# The sizes of the batch in the case: 6 channels, so the loop runs 6 times.
N, C, H, W = 2, 6, 3, 3


def make_inputs(device, n=N, c=C, h=H, w=W):
    """A batch `[n, c, h, w]` and a per-channel mean `[c]`, without drawing from any RNG."""
    x = torch.arange(n * c * h * w, dtype=torch.float32, device=device).reshape(n, c, h, w)
    mean = torch.arange(c, dtype=torch.float32, device=device) * 10.0
    return x, mean


def subtract_in_a_loop(x, mean):
    """One subtraction per channel, then the channels stacked back along dim 1."""
    return torch.stack([x[:, i] - mean[i] for i in range(x.shape[1])], dim=1)


def subtract_broadcast(x, mean):
    """One subtraction: `[C]` viewed as `[1, C, 1, 1]` broadcasts over N, H and W."""
    return x - mean.reshape(1, -1, 1, 1)


class Dispatched(NamedTuple):
    """How many subtractions, and aten ops in all, the profiler saw; and the result."""

    subs: int
    total_ops: int
    result: torch.Tensor


def profiled(fn, device):
    x, mean = make_inputs(device)
    result, ops = ops_called(fn, x, mean)
    return Dispatched(ops["aten::sub"], sum(ops.values()), result)


# %% [markdown]
# ## The broken code
# The loop, run under `torch.profiler` (through `ops_called`), which counts the aten ops it
# dispatched. This checks the mechanism, not a time; the timing is in
# `benchmarks/test_bench_python_loop_vs_broadcast.py`.


# %%
def broken(device):
    return profiled(subtract_in_a_loop, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # subs=6, total_ops=33 on 2.13.0 (12 select, 12 as_strided…)

# %% [markdown]
# ## Why
# Every tensor operation called from Python goes through the dispatcher, checks its arguments,
# allocates an output and, on a GPU, launches at least one kernel. For a small slice that fixed
# cost is larger than the arithmetic. The loop pays it three times per channel: an index
# (`aten::select`) into `x`, one into `mean`, and the `aten::sub`. Then `torch.stack` allocates
# the result again and copies every slice into it. On a GPU each launch is tiny, so the device
# sits idle between them while Python queues the next one. Broadcasting does the whole job in one
# kernel. A tensor of shape `[1, C, 1, 1]` lines up with `[N, C, H, W]` from the trailing
# dimension: where one side has size 1 it is repeated along that dimension (through a zero stride,
# without a copy), so a single `aten::sub` sees the full batch. The launches and the idle GPU
# themselves are not measured by the case.
#
# ## The fix
# Give the small tensor the right number of dimensions and let broadcasting expand it:
# `mean.reshape(1, -1, 1, 1)` (or `mean[:, None, None]`, which is aligned from the right), then
# one subtraction.


# %%
def fixed(device):
    return profiled(subtract_broadcast, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))  # subs=1, total_ops=3 (reshape, the view it makes, sub)

# %% [markdown]
# ## Where it comes from
# The source notes, in their tensor section, warn that when the same operation is applied to
# several groups of a tensor, splitting it with a `for` loop, operating, and putting the pieces
# back together throws the parallelism away and is slow. A list comprehension is no faster. They
# say to use broadcasting instead, and give the batch-norm example used here: a mean of shape
# `[C]` reshaped to `[1, C, 1, 1]` (or indexed as `mean[:, None, None]`) before it is subtracted
# from an `[N, C, H, W]` input. The rules are in PyTorch's "Broadcasting semantics" note, which
# also says the expanded tensor is not copied. Broadcasting came in torch 0.2, the lower end of
# `affects`. Every release since dispatches the loop one op at a time in eager mode, so the
# range is open above. (`torch.compile` can fuse such a loop, but that is not what eager code
# gets.)

# %% [markdown]
# ## How the harness checks it
#
# Another slow way to line the shapes up is not a loop at all: `repeat` copies the mean out to
# the full `[N, C, H, W]` before one subtraction. It costs memory and a copy, but the profiler
# shows a single `aten::sub`: that is a different waste, not this one.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """More than one subtraction was dispatched: one per channel instead of one in all."""
    return run.error is None and run.value.subs > 1


def near_miss(device):
    def subtract_repeated(x, mean):
        n, _, h, w = x.shape
        return x - mean.reshape(1, -1, 1, 1).repeat(n, 1, h, w)  # materialised, then one sub

    return profiled(subtract_repeated, device)


def check(run, device):
    """The profiler counted one `aten::sub` in all, and the result equals the same subtraction
    done by NumPy's own broadcasting, on host copies of the inputs."""
    assert run.value.subs == 1, f"dispatched {run.value.subs} subtractions, not one"
    x, mean = make_inputs(device)
    expected = x.cpu().numpy() - mean.cpu().numpy().reshape(1, C, 1, 1)
    torch.testing.assert_close(run.value.result.cpu(), torch.from_numpy(expected))


CASE = Case(
    id="python-loop-vs-broadcast",
    title="A Python loop over slices instead of one broadcast op",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="A Python loop over channels gives the right answer, slowly, where one broadcast would do.",
    # Broadcasting arrived in 0.2; the loop costs one dispatch per slice in every release since.
    # The range is open above.
    affects=(Affects(">=0.2", since="the 0.2.0 release notes, which introduced NumPy-style broadcasting"),),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section 'Tensor': a for loop (or list comprehension) over groups is slow; use "
            "broadcast, e.g. a BN mean reshaped to [1, C, 1, 1]"
        ),
    ),
    tags=("devices", "broadcasting", "vectorization", "python_loop"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/broadcasting.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.broadcast_tensors.html",
    ),
)
