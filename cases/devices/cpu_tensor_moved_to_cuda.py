# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.zeros(3, 3).cuda()` builds the tensor on the CPU, then copies it over
#
# Inside a training step you need a small constant on the GPU and write `torch.zeros(3, 3).cuda()`
# (or `.to(device)`). The result is correct and nothing warns, but every call allocates and fills
# the tensor in host memory, then copies it to the GPU. That plain host-to-device copy waits for
# the GPU stream to finish. In a loop, these small copies and waits add up, and the GPU idles
# while the CPU catches up. The profiler shows the copy: `aten::_to_copy` and `aten::copy_`,
# where creating the tensor on the device shows none.

# %%
from typing import NamedTuple

import torch

from torch_pitfalls import observe, ops_called


def target(device):
    """Where the tensor should end up: `device` itself, except on the CPU, where moving a tensor
    is a no-op and the `meta` device (shapes without data) stands in for the GPU."""
    return "meta" if torch.device(device).type == "cpu" else device


class Made(NamedTuple):
    """Where the tensor ended up, and what the profiler saw while making it: `moves` counts
    `aten::_to_copy` (what `.to`/`.cuda()` dispatch when the tensor must change device),
    `copies` counts `aten::copy_` (the data copied into the new tensor)."""

    device: str
    moves: int
    copies: int
    tensor: torch.Tensor


def zeros_then_move(device):
    return torch.zeros(3, 3).to(device)  # on "cuda" this is torch.zeros(3, 3).cuda()


def zeros_on_device(device):
    return torch.zeros(3, 3, device=device)


def made_by(make, device):
    tensor, ops = ops_called(make, device)
    return Made(tensor.device.type, ops["aten::_to_copy"], ops["aten::copy_"], tensor)


# %% [markdown]
# ## The broken code
# The two-step version, written with `.to(device)` so the same code runs on every device. On
# `"cuda"` it is exactly `torch.zeros(3, 3).cuda()`; on the CPU it moves to `meta`. It runs
# under `torch.profiler`, which counts the aten ops it dispatched. This is a mechanism check,
# not a timing: the timing is in `benchmarks/test_bench_cpu_tensor_moved_to_cuda.py`.


# %%
def broken(device):
    return made_by(zeros_then_move, target(device))


# %% [markdown]
# On the CPU itself there is nothing to move: `.to("cpu")` returns the very same tensor, and
# no copy op runs. That is why, on a machine without a GPU, the case moves to the `meta`
# device (shapes without data) instead. It takes the same `_to_copy` path as a move to CUDA, so
# the profiler sees the same two ops. It is a proxy: it shows the copy, not the GPU's wait.

# %%
if __name__ == "__main__":
    host = torch.zeros(3, 3)
    assert host.to("cpu") is host  # no new tensor at all
    print(observe(broken, "cpu"))  # Made(device='meta', moves=1, copies=1, ...)

# %% [markdown]
# And on a build of torch without CUDA (or a machine without a GPU), `.cuda()` does not fall
# back to the CPU. It raises at once (`AssertionError: Torch not compiled with CUDA enabled` on
# a CPU-only build), which is one more reason to write `device=device` and choose the device in
# one place:

# %%
if __name__ == "__main__" and not torch.cuda.is_available():
    print(observe(lambda: torch.zeros(3, 3).cuda()))

# %% [markdown]
# ## Why
# `torch.zeros(3, 3)` has no device argument, so it uses the default device, the CPU. It allocates
# host memory and fills it there. `.cuda()` (like `.to("cuda")`) then dispatches `aten::_to_copy`:
# an empty tensor on the GPU and an `aten::copy_` into it. For a host-to-device copy without
# `non_blocking=True`, the CUDA copy kernel calls `memcpy_and_sync`, meaning `cudaMemcpyAsync`
# followed by `cudaStreamSynchronize`. The CPU therefore waits until the GPU has drained
# everything queued before the copy. A tensor created with `device="cuda"` is instead allocated by
# the GPU caching allocator and filled by a kernel launched on the stream, with no host memory, no
# copy and no wait. With `device="cpu"` both spellings are the same work: `.to` sees that the
# tensor is already where it should be and returns it unchanged. The copy path is shown on the CPU
# through the `meta` device (a proxy: no GPU wait is involved there), and the benchmark measures
# the real cost wherever a GPU is present.
#
# ## The fix
# Create the tensor where it will be used: `torch.zeros(3, 3, device=device)`. Inside a module
# or function, take the device from a tensor you already have (`device=x.device`), or use the
# `*_like` factories (`torch.zeros_like(x)`). Since 2.0, `with torch.device("cuda"):` (or
# `torch.set_default_device`) makes factory calls without a device argument use the GPU.


# %%
def fixed(device):
    return made_by(zeros_on_device, target(device))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes, in their list of tensor tips, warn that `Torch.zeros([3,3]).cuda()` added to
# something already on the GPU is slow, because the tensor is really created on the CPU and then
# moved. They suggest creating such small tensors on the GPU directly. Their spelling of that is
# pre-0.4 style, `torch.cuda.FloatTensor(shape).fill_(...)` (or `.uniform_()`/`.normal_()` for
# random values); today it is the `device=` argument. PyTorch's Performance Tuning Guide makes
# the same recommendation under "Create tensors directly on the target device" (use
# `torch.rand(size, device='cuda')` rather than `torch.rand(size).cuda()`). Its "Avoid unnecessary
# CPU-GPU synchronization" section lists `tensor.cuda()` and `tensor.to(device)` among the calls
# that synchronise. The synchronisation is `memcpy_and_sync` in
# `aten/src/ATen/native/cuda/Copy.cu`, the path taken whenever `non_blocking` is false.
# `Tensor.to` and the `device=` keyword of the factory functions both came with 0.4, the lower
# end of `affects` on CUDA. No release has changed what `.cuda()` does, so the range is open
# above. The CPU cell is the `meta` proxy, over every release the matrix runs (from 1.13.1).

# %% [markdown]
# ## How the harness checks it
#
# Not every `aten::copy_` in a profile is this pitfall. Cloning a tensor that already lives on
# the device (say, to get a fresh copy of a constant each step) copies too, but on the device:
# nothing was made in host memory and nothing changed device, so no `_to_copy` ran.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The profiler saw a move (`_to_copy`) and its copy (`copy_`): the zeros were made in host
    memory, then copied to the device."""
    return run.error is None and run.value.moves > 0 and run.value.copies > 0


def near_miss(device):
    def zeros_then_clone(where):
        return torch.zeros(3, 3, device=where).clone()

    return made_by(zeros_then_clone, target(device))


def check(run, device):
    """The profiler counted no move and no copy, and the tensor is a 3x3 float32 on the target
    device, with all-zero values written out by hand (a `meta` tensor has shape, no values)."""
    made, where = run.value, torch.device(target(device))
    assert made.moves == 0 and made.copies == 0, f"making the zeros on {where} copied: {made}"
    assert made.tensor.device.type == where.type
    assert made.tensor.shape == (3, 3) and made.tensor.dtype == torch.float32
    if where.type != "meta":
        expected = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], device=where)
        torch.testing.assert_close(made.tensor, expected, rtol=0, atol=0)


CASE = Case(
    id="cpu-tensor-moved-to-cuda",
    title="torch.zeros(3, 3).cuda() builds the tensor on the CPU, then copies it over",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="torch.zeros(3, 3).cuda() builds on the CPU and copies every step, stalling the GPU stream.",
    star=True,  # a pitfall the source posts single out
    # `.to(device)` and the `device=` argument both arrived in 0.4; the copy is what `.to` and
    # `.cuda()` are defined to do, and no release has changed it. On the CPU the case moves to
    # the `meta` device instead, which takes the same `_to_copy` path: a proxy, not the GPU.
    affects=(
        Affects(
            device="cpu",
            proxy="a move to the meta device stands for the move to CUDA: the "
            "same aten::_to_copy and aten::copy_, without the GPU and its wait",
        ),
        Affects(
            ">=0.4",
            since="the 0.4.0 release notes, which introduced Tensor.to and the "
            "device= argument of the factory functions",
            device="cuda",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Tensor': Torch.zeros([3,3]).cuda() is slow, made on the CPU first"),),
    tags=("devices", "cuda", "host_to_device", "factory_functions"),
    references=(
        # "Create tensors directly on the target device", and .cuda() among the syncs:
        "https://docs.pytorch.org/tutorials/recipes/recipes/tuning_guide",
        # copy_kernel_cuda: memcpy_and_sync when non_blocking is false
        "https://github.com/pytorch/pytorch/blob/main/aten/src/ATen/native/cuda/Copy.cu",
        "https://docs.pytorch.org/tutorials/recipes/recipes/changing_default_device.html",
    ),
)
