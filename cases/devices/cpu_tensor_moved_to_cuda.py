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

from harness import Case, observe, ops_called
from harness.sources import S1

CASE = Case(
    id="cpu-tensor-moved-to-cuda",
    title="torch.zeros(3, 3).cuda() builds the tensor on the CPU, then copies it over",
    kind="performance",
    # `.to(device)` and the `device=` argument both arrived in 0.4; the copy is what `.to` and
    # `.cuda()` are defined to do, and no release has changed it. Seen here only as the CPU
    # contrast (no copy): the CUDA side was not observed by this project's runs.
    affects=">=0.4",
    devices=("cuda",),
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

# The copy the profiler sees when a tensor changes device: `.to` dispatches `aten::_to_copy`,
# which allocates on the target device and fills it with `aten::copy_`.
COPY_OPS = ("aten::_to_copy", "aten::copy_")


class Made(NamedTuple):
    """Where the tensor ended up, and how many copy ops the profiler saw while making it."""

    device: str
    copy_ops: int


def zeros_then_move(device):
    return torch.zeros(3, 3).to(device)  # on "cuda" this is torch.zeros(3, 3).cuda()


def zeros_on_device(device):
    return torch.zeros(3, 3, device=device)


def made_by(make, device):
    tensor, ops = ops_called(make, device)
    return tensor, Made(tensor.device.type, sum(ops[name] for name in COPY_OPS))


# %% [markdown]
# ## The broken code
# The two-step version, written with `.to(device)` so the same code runs on every device. On
# `"cuda"` it is exactly `torch.zeros(3, 3).cuda()`. It runs under `torch.profiler`, which
# counts the aten ops it dispatched. This is a mechanism check, not a timing: the timing is in
# `benchmarks/test_bench_cpu_tensor_moved_to_cuda.py`.

# %%
def broken(device):
    _, made = made_by(zeros_then_move, device)
    return made


def symptom(run):
    """The profiler saw a copy: the zeros were made in host memory, then copied to the device."""
    return run.error is None and run.value.copy_ops > 0


# %% [markdown]
# On the CPU there is nothing to move: `.to("cpu")` returns the very same tensor, and no copy
# op runs, so the symptom is absent. A machine without a GPU can still watch the copy happen by
# moving to the `meta` device (shapes without data), which takes the same `_to_copy` path:

# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # Made(device='cpu', copy_ops=0)
    host = torch.zeros(3, 3)
    assert host.to("cpu") is host  # no new tensor at all
    print(observe(broken, "meta"))  # Made(device='meta', copy_ops=2): _to_copy and copy_

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
# `torch.zeros(3, 3)` has no device argument, so it uses the default device, the CPU. It
# allocates host memory and fills it there. `.cuda()` (like `.to("cuda")`) then dispatches
# `aten::_to_copy`: an empty tensor on the GPU and an `aten::copy_` into it. For a host-to-device
# copy without `non_blocking=True`, the CUDA copy kernel calls `memcpy_and_sync`, meaning
# `cudaMemcpyAsync` followed by `cudaStreamSynchronize`. The CPU therefore waits until the GPU
# has drained everything queued before the copy. A tensor created with `device="cuda"` is
# instead allocated by the GPU caching allocator and filled by a kernel launched on the stream,
# with no host memory, no copy and no wait. With `device="cpu"` both spellings are the same work:
# `.to` sees that the tensor is already where it should be and returns it unchanged. The CUDA
# side was not observed by this project's runs, since no GPU was available. The copy path is
# shown on the CPU through the `meta` device above, and the benchmark measures the real cost
# wherever a GPU is present.
#
# ## The fix
# Create the tensor where it will be used: `torch.zeros(3, 3, device=device)`. Inside a module
# or function, take the device from a tensor you already have (`device=x.device`), or use the
# `*_like` factories (`torch.zeros_like(x)`). Since 2.0, `with torch.device("cuda"):` (or
# `torch.set_default_device`) makes factory calls without a device argument use the GPU.

# %%
def fixed(device):
    tensor, made = made_by(zeros_on_device, device)
    assert made.copy_ops == 0, f"making the zeros on {device} copied: {made}"
    assert tensor.device.type == torch.device(device).type
    expected = torch.tensor([[0.0, 0.0, 0.0], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]], device=device)
    torch.testing.assert_close(tensor, expected, rtol=0, atol=0)
    return made


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
# end of `affects`. No release has changed what `.cuda()` does, so the range is open above.
