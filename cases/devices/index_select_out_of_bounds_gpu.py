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
# restarted.

# %%
import re
from typing import NamedTuple, Optional

import torch

from harness import Case, observe
from harness.sources import S2

CASE = Case(
    id="index-select-out-of-bounds-gpu",
    title="An out-of-range index_select on the GPU fails later, somewhere else",
    kind="error",
    # The CUDA kernel checks the index only with a device-side assert, in the 2021 ATen source and
    # in today's alike, and reports span 2017 to 2024; no release is known to have moved the check
    # to the host, so the range is left open at both ends (see "Where it comes from").
    affects="*",
    devices=("cuda",),
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

# The table both variants index: 4 rows, so the valid row numbers are 0, 1, 2 and 3.
ROWS = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0], [6.0, 7.0, 8.0], [9.0, 10.0, 11.0]]


class Surfaced(NamedTuple):
    """Where an error came out ("index_select" is the call itself), and which error it was."""

    step: str
    error: Optional[BaseException]


# %% [markdown]
# ## The broken code
# Select rows 1 and 4 of a 4-row table, then carry on the way a training step would: one more
# operation, then a `.item()` to log a number. The variant notes the line at which an error
# came out.

# %%
def broken(device):
    table = torch.tensor(ROWS, device=device)
    index = torch.tensor([1, 4], device=device)  # row 4 does not exist
    step = "index_select"
    try:
        rows = torch.index_select(table, 0, index)
        step = "rows * 2"
        doubled = rows * 2
        step = "doubled.sum().item()"
        doubled.sum().item()  # .item() waits for the GPU: the first synchronisation
    except Exception as exc:  # the error is the observation: where it surfaced, and what it was
        return Surfaced(step, exc)
    return Surfaced("nowhere", None)


def symptom(run):
    """index_select itself returned, and a CUDA device-side assert came out of a later line
    (a RuntimeError; torch.AcceleratorError, its subclass, from 2.8)."""
    got = run.value
    return (
        run.error is None
        and isinstance(got, Surfaced)
        and got.step != "index_select"
        and isinstance(got.error, RuntimeError)
        and re.search(r"device-side assert", str(got.error), re.IGNORECASE) is not None
    )


# %% [markdown]
# On the CPU the index is checked on the host during the call, so the error comes out of
# `index_select` itself:

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # Surfaced(step='index_select', error=IndexError(...))

# %% [markdown]
# The source post gives a second warning about the same call: the index must be an integer
# tensor. `index_select` accepts `int64` (and `int32`), and refuses a float index at the call on
# every device:

# %%
if __name__ == "__main__":
    table = torch.tensor(ROWS)
    float_index = torch.tensor([1.0, 3.0])
    print(observe(torch.index_select, table, 0, float_index))  # RuntimeError: ... int32 or int64

# %% [markdown]
# ## Why
# A CUDA kernel launch is asynchronous. `index_select` checks the shapes and dtypes on the host,
# queues the copy kernel on the GPU and returns without waiting for it. The index values are in
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
# richer device-side assertion reports. The CUDA side was not observed by this project's runs,
# as no GPU was available. The CPU run shows the contrast: there, the symptom is absent.
#
# ## The fix
# Check the indices before they reach the kernel, and raise a clear `IndexError` at the call on
# every device. The check costs one synchronisation on CUDA (reading a boolean back). Where the
# indices are built on the CPU, check them there, before `.to(device)`, and that cost goes away.

# %%
class RowIndexError(IndexError):
    """An index refused by ``select_rows_checked`` before any kernel saw it."""


def select_rows_checked(table, index):
    """``torch.index_select(table, 0, index)``, refusing a bad index on the host, at the call."""
    if index.dtype not in (torch.int64, torch.int32):
        raise TypeError(f"index must be an int64 (or int32) tensor, got {index.dtype}")
    n = table.shape[0]
    outside = (index < 0) | (index >= n)
    if bool(outside.any()):  # on CUDA: one synchronisation, and no kernel ever sees the bad index
        raise RowIndexError(f"row indices {index[outside].tolist()} are out of range for {n} rows")
    return torch.index_select(table, 0, index)


def fixed(device):
    table = torch.tensor(ROWS, device=device)
    wanted = [3, 0, 2]
    rows = select_rows_checked(table, torch.tensor(wanted, device=device))
    # The same rows picked by plain Python indexing of the list the table was built from.
    torch.testing.assert_close(rows, torch.tensor([ROWS[i] for i in wanted], device=device))
    # Row 4 is refused by the check itself, before index_select runs. On CPU, torch's own check
    # would raise a plain IndexError from inside index_select; the subclass tells the two apart.
    try:
        select_rows_checked(table, torch.tensor([1, 4], device=device))
    except RowIndexError:
        pass
    else:
        raise AssertionError("row 4 of a 4-row table was not refused")
    # Nothing bad reached the device: a synchronising read after the refusal still works.
    assert rows.sum().item() == sum(sum(ROWS[i]) for i in wanted)
    return rows


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
