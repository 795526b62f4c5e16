# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An out-of-range `index_select` on the GPU fails later, somewhere else
#
# On the CPU, `torch.index_select(table, 0, index)` with a row number past the end raises
# `IndexError: index out of range in self` on that line. On a GPU the same line returns at once
# and the program goes on. A few lines later, at some unrelated `.item()`, `print` or `.cpu()`,
# it dies with `RuntimeError: CUDA error: device-side assert triggered` (a
# `torch.AcceleratorError` in recent releases), and the traceback points at that later line.
# From then on every CUDA call in the process fails with the same error, until the process is
# restarted. (The index must also be an integer tensor: a float one is refused at the call, on
# every device, though in other words on the GPU.)

# %%
import re
from typing import NamedTuple, Optional

import torch

from torch_pitfalls import observe

# The table every variant indexes: 4 rows, so the valid row numbers are 0, 1, 2 and 3.
ROWS = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]


class Surfaced(NamedTuple):
    """What one selection came to: the line an error came out of ("index_select" is the call
    itself, "nowhere" when none did), the error, and the number logged when it got that far."""

    step: str
    error: Optional[BaseException]
    logged: Optional[float]


class Selected(NamedTuple):
    """The two selections of the broken code: one by a float index, one past the last row."""

    float_index: Surfaced
    out_of_range: Surfaced


def select_and_log(select, table, index):
    """`select(table, 0, index)`, then carry on the way a training step would: one more
    operation, then a `.item()` to log a number. Notes the line at which an error came out."""
    step = "index_select"
    try:
        rows = select(table, 0, index)
        step = "rows * 2"
        doubled = rows * 2
        step = "doubled.sum().item()"
        logged = doubled.sum().item()  # .item() waits for the GPU: the first synchronisation
    except Exception as exc:  # the error is the observation: where it surfaced, and what it was
        return Surfaced(step, exc, None)
    return Surfaced("nowhere", None, logged)


# %% [markdown]
# ## The broken code
# Two selections from a 4-row table, each followed by the rest of a training step. The first
# computes its row numbers with a division, so they are floats. The second asks for rows 1 and
# 4, and row 4 does not exist. (It runs last: on a GPU it breaks everything after it.)


# %%
def broken(device):
    table = torch.tensor(ROWS, device=device)
    positions = torch.tensor([2.0, 6.0], device=device) / 2  # rows 1 and 3, as floats
    past_the_end = torch.tensor([1, 4], device=device)  # row 4 does not exist
    return Selected(
        select_and_log(torch.index_select, table, positions),
        select_and_log(torch.index_select, table, past_the_end),
    )


# %% [markdown]
# On the CPU the index is checked on the host during the call, so both errors come out of
# `index_select` itself: the float index as a `RuntimeError`, the missing row as an
# `IndexError`. The float index is refused at the call on every device:

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    # Selected(float_index=Surfaced(step='index_select', error=RuntimeError(... int32 or int64 ...)),
    #          out_of_range=Surfaced(step='index_select', error=IndexError('index out of range in self')))

# %% [markdown]
# ## Why
# A CUDA kernel launch is asynchronous. `index_select` checks the shapes and dtypes on the host,
# which is why the float index is refused at the call on every device. Then it queues the copy
# kernel on the GPU and returns without waiting for it. The index values are in
# GPU memory, and reading them on the host would cost a synchronisation on every call, so the
# host never looks at them. The bound is checked inside the kernel instead, by a device-side
# assert (`srcIndex < srcSelectDimSize` in `aten/src/ATen/native/cuda/Indexing.cu`). When that
# assert fires, the CUDA runtime records a sticky error. The next CUDA API call that checks for
# errors reports it: a later kernel launch, or a synchronising call such as `.item()`, `.cpu()`
# or `print(tensor)`. So the Python traceback blames whatever line happened to run next. The
# error is *sticky*: the CUDA context is unusable afterwards, and every later CUDA call in the
# process fails with the same message. That is why this case runs each variant in its own
# process on CUDA. Since torch 2.8 the error is raised as `torch.AcceleratorError`, a subclass of
# `RuntimeError`, so `except RuntimeError` still catches it. The CPU kernel reads the indices on
# the host anyway, so it checks them during the call and raises a plain `IndexError` there.
#
# To find the real line, run the script with `CUDA_LAUNCH_BLOCKING=1` in the environment (set
# before CUDA starts, e.g. on the command line). Every launch then waits for its kernel, and the
# error comes out of `index_select` itself. This is for debugging only, because it removes all
# CPU/GPU overlap. The error text also mentions `TORCH_USE_CUDA_DSA`, a build option that gives
# richer device-side assertion reports. The CPU run shows the integer-index rule and, for the
# bound, the contrast: there, the out-of-range row is refused at the call.
#
# ## The fix
# Build the index as integers: convert whole-number positions once with `.long()` (round them
# first if they may not be whole). And check the indices before they reach the kernel, raising a
# clear `IndexError` at the call on every device. The check costs one synchronisation on CUDA
# (reading a boolean back). Where the indices are built on the CPU, check them there, before
# `.to(device)`, and that cost goes away.


# %%
class RowIndexError(IndexError):
    """An index refused by ``select_rows_checked`` before any kernel saw it."""


def select_rows_checked(table, dim, index):
    """``torch.index_select(table, dim, index)``, refusing a bad index on the host, at the call."""
    if index.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"index must be an int64 (or int32) tensor, got {index.dtype}")
    n = table.shape[dim]
    outside = (index < 0) | (index >= n)
    if bool(outside.any()):  # on CUDA: one synchronisation, and no kernel ever sees the bad index
        raise RowIndexError(f"row indices {index[outside].tolist()} are out of range for {n} rows")
    return torch.index_select(table, dim, index)


def fixed(device):
    table = torch.tensor(ROWS, device=device)
    positions = torch.tensor([2.0, 6.0], device=device) / 2
    past_the_end = torch.tensor([1, 4], device=device)
    return Selected(
        select_and_log(select_rows_checked, table, positions.long()),  # whole numbers: int64
        select_and_log(select_rows_checked, table, past_the_end),  # refused before any kernel
    )


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's `index_select` section points out that, with a GPU, PyTorch does not
# appear to check whether an index is in range. When it is not, the error may show up in later
# code rather than at the `index_select` call, so the author advises checking your indices. The
# same section notes that the index has to be a LongTensor. Today `int32` is accepted as well,
# and a float index is refused with a `RuntimeError`.
#
# Upstream: pytorch/pytorch#120901 (2024) shows the same contrast for advanced indexing, with a
# device-side assert on CUDA and `IndexError: index 2 is out of bounds` on CPU. pytorch/pytorch#2300
# (2017) asked how to recover after such an assert, and the answer was that there is no way: the
# CUDA context is left in a broken state. pytorch/pytorch#38944 explains why PyTorch's own test
# suite avoids these asserts in-process. The kernel-side check is the same in the 2021 ATen
# source and in a recent one (`CUDA_KERNEL_ASSERT(srcIndex < srcSelectDimSize)` in both
# `indexSelectSmallIndex` and `indexSelectLargeIndex`, with no host-side bound check in
# `index_select_out_cuda_impl`). Tracebacks from 2024 builds report that same assertion. PR
# #152023 (April 2025) introduced `torch.AcceleratorError`, a `RuntimeError` subclass carrying the
# CUDA error code, and the 2.8.0 wheels have it (pytorch/pytorch#167309 quotes their
# `torch/cuda/__init__.py`). It changed the exception class only, not where the error surfaces.

# %% [markdown]
# ## How the harness checks it
#
# Not every `RuntimeError` that `index_select` raises at the call is about the index. Writing
# the rows into a preallocated `float64` buffer with `out=` is refused as well, for the
# *output's* dtype: the index was fine.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S2


def symptom(run):
    """Both forms start with the integer-index rule: the float index is refused at the call (on
    the CPU by a RuntimeError naming int32/int64, on CUDA by a NotImplementedError for 'Float'
    from the kernel's dispatch). Then, on a GPU ("device-side assert"), the out-of-range
    index_select returns and a CUDA device-side assert comes out of a later line (a RuntimeError;
    torch.AcceleratorError, its subclass, from 2.8). On the CPU ("integer-index rule") the
    out-of-range row is refused at the call itself, with an IndexError."""
    if run.error is not None or not isinstance(run.value, Selected):
        return False
    by_float, past_end = run.value
    integer_rule = by_float.step == "index_select" and (
        # the CPU's check names the integer dtypes it takes
        (
            isinstance(by_float.error, RuntimeError)
            and re.search(r"int32 or int64|scalar type Long", str(by_float.error), re.IGNORECASE) is not None
        )
        # CUDA's kernel dispatch has no version for a float index (NotImplementedError, a
        # RuntimeError): '"index_select_out_cuda_impl" not implemented for 'Float''
        or (
            isinstance(by_float.error, NotImplementedError)
            and re.search(r"index_select\w*\"? not implemented for 'Float'", str(by_float.error)) is not None
        )
    )
    if not integer_rule:
        return False
    if (
        past_end.step != "index_select"
        and isinstance(past_end.error, RuntimeError)
        and re.search(r"device-side assert", str(past_end.error), re.IGNORECASE) is not None
    ):
        return "device-side assert"
    if (
        past_end.step == "index_select"
        and isinstance(past_end.error, IndexError)
        and re.search(r"out of range", str(past_end.error), re.IGNORECASE) is not None
    ):
        return "integer-index rule"
    return False


def near_miss(device):
    table = torch.tensor(ROWS, device=device)
    buffer = torch.empty(2, 3, dtype=torch.float64, device=device)  # reused from elsewhere

    def into_buffer(table, dim, index):
        return torch.index_select(table, dim, index, out=buffer)

    return Selected(
        select_and_log(into_buffer, table, torch.tensor([1, 3], device=device)),
        select_and_log(torch.index_select, table, torch.tensor([1, 4], device=device)),
    )


def check(run, device):
    """Rows 1 and 3, doubled and summed, log 2 * (3+4+5 + 9+10+11) = 84, worked out from ROWS by
    hand; and row 4 was refused at the call by the host-side check (RowIndexError), not by torch's
    own CPU check (a plain IndexError) nor by a later device-side assert."""
    by_float, past_end = run.value
    assert by_float.error is None and by_float.logged == 2 * (sum(ROWS[1]) + sum(ROWS[3])), by_float
    assert past_end.step == "index_select" and isinstance(past_end.error, RowIndexError), past_end


CASE = Case(
    id="index-select-out-of-bounds-gpu",
    title="An out-of-range index_select on the GPU fails later, somewhere else",
    kind="error",
    symptom_category="error",
    symptom_line="An out-of-range index on the GPU fails later, at an unrelated line, with a device-side assert.",
    star=True,  # a pitfall the source posts single out
    # The CUDA kernel checks the index only with a device-side assert, in the 2021 ATen source and
    # in today's alike, and reports span 2017 to 2024; no release is known to have moved the check
    # to the host, so the range is left open at both ends (see "Where it comes from"). The source
    # post's second rule, that the index must be an integer tensor, holds on every device: it is
    # the form the CPU shows (reproduced on every release of the matrix), where the bound is
    # checked at the call.
    affects=(
        Affects(
            device="cpu",
            form="integer-index rule",
            reason="a float index is refused at the call; the CPU checks the bound there too",
        ),
        Affects(device="cuda", form="device-side assert"),
    ),
    devices=("cpu", "cuda"),
    sources=(S2.at("section 'index_select' (嘿,检查自己,说你呢, index_select)"),),
    tags=("devices", "cuda", "index_select", "device_assert", "async_error"),
    references=(
        "https://github.com/pytorch/pytorch/issues/120901",  # CUDA assert; IndexError on CPU
        "https://github.com/pytorch/pytorch/issues/2300",  # after the assert, nothing works
        "https://github.com/pytorch/pytorch/issues/38944",  # an assert invalidates the CUDA context
        "https://github.com/pytorch/pytorch/pull/152023",  # torch.AcceleratorError, a RuntimeError
        "https://docs.pytorch.org/docs/stable/generated/torch.index_select.html",
    ),
    isolate=("cuda",),  # the device-side assert poisons the CUDA context: one process per variant
)
