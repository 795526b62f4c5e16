# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # After `del`, GPU memory stays reserved by PyTorch's caching allocator
#
# You delete a large tensor on the GPU (`del x`), and `nvidia-smi` still shows the process
# holding the memory. Another process on the same GPU, or a library that allocates with CUDA
# directly, then runs out of memory, although your program no longer uses it. Inside the
# process, `torch.cuda.memory_allocated()` has dropped back, but `torch.cuda.memory_reserved()`
# has not. Only `torch.cuda.empty_cache()` hands the memory back to the driver.

# %%
import gc
from typing import NamedTuple

import torch
from torch.profiler import ProfilerActivity, profile

from torch_pitfalls import observe

BLOCK_ELEMENTS = 8 * 1024 * 1024  # float32: 32 MiB, far above the allocator's small-block pool
BLOCK_BYTES = BLOCK_ELEMENTS * 4  # by hand: 4 bytes per float32


class Held(NamedTuple):
    """Bytes still held for tensors (`allocated`) and in the allocator's cache (`cached` =
    reserved minus allocated), beyond what was held before."""

    allocated: int
    cached: int


def held_after(fn, device):
    """Run `fn(device)` and return the bytes it left held on `device`.

    On CUDA the allocator's own counters say it, measured from an emptied cache so that only
    `fn`'s block counts. Garbage is collected first: a tensor that earlier code left in a
    reference cycle would otherwise be freed in the middle, whenever the collector runs, and
    count as `fn`'s (seen as `Held(allocated=-512, cached=512)` in a whole-corpus run). On the CPU there is no caching allocator in torch and no such counter:
    torch's default CPU allocator hands a freed buffer straight back to the C library (`free`).
    What a CPU tensor holds is seen instead by the profiler, which records every allocation and
    free (`profile_memory=True`); their net is what `fn` left allocated, and nothing is cached.
    """
    if torch.device(device).type == "cuda":
        gc.collect()
        torch.cuda.empty_cache()
        allocated = torch.cuda.memory_allocated(device)
        reserved = torch.cuda.memory_reserved(device)
        fn(device)
        now_allocated = torch.cuda.memory_allocated(device)
        now_cached = torch.cuda.memory_reserved(device) - now_allocated
        return Held(now_allocated - allocated, now_cached - (reserved - allocated))
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn(device)
    return Held(sum(evt.self_cpu_memory_usage for evt in prof.events()), 0)


def allocate_and_delete(device):
    x = torch.ones(BLOCK_ELEMENTS, device=device)
    assert x.numel() * x.element_size() == BLOCK_BYTES  # (Tensor.nbytes only from 2.1)
    del x  # the last reference: the tensor is freed


def allocate_delete_and_empty(device):
    allocate_and_delete(device)
    if torch.device(device).type == "cuda":
        gc.collect()
        torch.cuda.empty_cache()  # hand the cached, unused blocks back to the driver


# %% [markdown]
# ## The broken code
# Allocate 32 MiB on `device`, `del` it, and look at what is still held. This checks the
# mechanism (bytes counted by the allocator), not a time. The timing is in
# `benchmarks/test_bench_cuda_cache_not_released.py`.


# %%
def broken(device):
    return held_after(allocate_and_delete, device)


# %% [markdown]
# On the CPU the profiler sees the 32 MiB allocated and freed again, with nothing held after
# `del`, so the symptom does not show there.

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # Held(allocated=0, cached=0)

# %% [markdown]
# ## Why
# `cudaMalloc` and `cudaFree` are slow, and `cudaFree` synchronises the device. So PyTorch's CUDA
# caching allocator asks the driver for memory in large segments and keeps them. When a tensor is
# freed (`del`, or its last reference goes away), its block goes back to the allocator's free
# list for the next tensor of a similar size, not back to the driver. For PyTorch itself that is
# what makes allocation cheap. To everything outside the process (`nvidia-smi`, another process,
# a library calling CUDA directly) the memory is still in use. `memory_allocated()` counts the
# bytes live tensors occupy; `memory_reserved()` counts everything the allocator holds, in use
# or cached. (It was called `memory_cached()` before it was renamed; the old name warns.) The
# gap between them is memory your program no longer uses but still holds. The CPU has no such
# cache in torch: a freed CPU buffer goes straight back to `free()`.
#
# ## The fix
# Drop the last reference (`del`, and mind references kept elsewhere: a list of losses, an
# exception traceback, a notebook's `_` variables), then call `torch.cuda.empty_cache()`. It
# returns every unused cached segment to the driver. It frees nothing that a live tensor still
# uses, and it does not give PyTorch itself more memory: the allocator could reuse the cached
# blocks anyway. Call it when memory must be handed to someone else, not in every step: the
# next allocation then has to go to the driver again (the benchmark pair measures that cost).


# %%
def fixed(device):
    return held_after(allocate_delete_and_empty, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes, in their closing list of tips, say that GPU memory is sometimes not freed
# after a run is stopped with Ctrl-C, and that it can be cleared by hand with
# `torch.cuda.empty_cache()` (or, failing that, by killing the process or resetting the GPU). The
# mechanism behind it is the one shown here. PyTorch's documentation of `torch.cuda.empty_cache`
# says it releases the unoccupied memory cached by the caching allocator, so that other GPU
# applications can use it and it shows in `nvidia-smi`. It adds that this does not increase the
# memory available to PyTorch. In `torch/cuda/memory.py`, `memory_cached` is a deprecated alias
# that warns "torch.cuda.memory_cached has been renamed to torch.cuda.memory_reserved". The
# caching itself predates the installable range, and no release is known to have changed it, so
# `affects` is open. The CPU contrast above is no proxy: torch has no caching allocator on the
# CPU, so both variants leave nothing held there, and the CPU cell is `unverified` (nothing there
# tells the fix from the broken code).

# %% [markdown]
# ## How the harness checks it
#
# Memory that stays in use after `del` is not always the cache. If another reference to the
# tensor survives (appended to a list for logging, say), the block is still *allocated*: a
# live tensor holds it, and `empty_cache()` could not release it either.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """No tensor holds the block any more, yet the allocator still keeps all of it cached."""
    return run.error is None and run.value.allocated == 0 and run.value.cached >= BLOCK_BYTES


def near_miss(device):
    kept = []

    def allocate_and_keep(device):
        kept.append(torch.ones(BLOCK_ELEMENTS, device=device))  # a second reference survives

    held = held_after(allocate_and_keep, device)  # Held(allocated=33554432, cached=0)
    kept.clear()
    return held


def check(run, device):
    """Nothing is left allocated and nothing cached: on CUDA the allocator's own counters
    (`memory_reserved()` back to where it was before the block), against 0 by hand. On the CPU
    the broken code leaves nothing held either, so this cannot tell the two apart there."""
    assert run.value == Held(allocated=0, cached=0), run.value


CASE = Case(
    id="cuda-cache-not-released",
    title="After del, GPU memory stays reserved by PyTorch's caching allocator",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="After del, nvidia-smi still shows the memory held: PyTorch's allocator keeps it.",
    # The CUDA caching allocator keeps freed blocks in every release; no release is known to
    # have changed that, so the range is open at both ends. The CPU contrast runs on every release.
    affects="*",
    devices=("cuda",),
    sources=(
        S1.at("the closing list of tips: GPU memory not freed after Ctrl-C; clear it with torch.cuda.empty_cache()"),
    ),
    tags=("devices", "cuda", "memory", "caching_allocator", "empty_cache"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.cuda.memory.empty_cache.html",
        # memory_reserved (renamed from memory_cached, which now warns) and empty_cache
        "https://docs.pytorch.org/docs/stable/_modules/torch/cuda/memory.html",
    ),
)
