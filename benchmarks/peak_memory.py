"""Peak bytes torch allocated while a function ran, beyond what was allocated when it started.

On CUDA that is the caching allocator's own counter (``max_memory_allocated``). The CPU has no
such counter in torch (and ``tracemalloc`` sees none of torch's buffers), so on the CPU the
profiler records every allocation and free (``profile_memory=True``) and the peak is taken from
their running sum, in time order. Both count tensor bytes only: memory outside torch's
allocators (Python objects, autograd's graph nodes) is not in it.
"""

import gc

import torch
from torch.autograd import DeviceType
from torch.profiler import ProfilerActivity, profile

_CPU = (DeviceType.CPU, DeviceType.MKLDNN, DeviceType.IDEEP)  # as torch's profiler groups them


def peak_bytes(fn, device: str) -> int:
    """Run ``fn()`` (its result dropped at once) and return its peak of new tensor bytes.

    On CUDA ``fn`` runs once unmeasured first: the first matrix product on a stream allocates
    cuBLAS's workspace through the caching allocator and keeps it (32 MiB, seen on an H200 with
    2.11.0+cu130), which would be counted against whichever benchmark ran one first."""
    if torch.device(device).type == "cuda":
        fn()
        gc.collect()
        torch.cuda.synchronize()
        start = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
        fn()
        torch.cuda.synchronize()
        return torch.cuda.max_memory_allocated() - start
    with profile(activities=[ProfilerActivity.CPU], profile_memory=True) as prof:
        fn()
    events = [e for e in prof.profiler.kineto_results.events() if e.name() == "[memory]" and e.device_type() in _CPU]
    held = peak = 0
    for event in sorted(events, key=lambda e: e.start_ns()):
        held += event.nbytes()  # negative for a free
        peak = max(peak, held)
    return peak
