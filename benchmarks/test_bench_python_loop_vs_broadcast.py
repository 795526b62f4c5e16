"""Benchmark pair for the case python-loop-vs-broadcast: a per-channel mean subtracted in a Python
loop over the channels and stacked back, against one broadcast subtraction, on every available
device.

Both functions and the inputs come from the case module itself, so the benchmark times the exact
code whose mechanism (one ``aten::sub`` per channel against one in all) the case checks. The
batch here is larger than in the case, ``[32, 64, 16, 16]``, so the loop runs 64 times. On CUDA
each call ends with ``torch.cuda.synchronize()``, so both variants are charged for their GPU work.
"""
import pytest
import torch

from case_modules import DEVICES, case_module

GROUP = "python-loop-vs-broadcast"
SIZES = dict(n=32, c=64, h=16, w=16)


case = case_module("python-loop-vs-broadcast")



def _call(fn, device):
    """One timed call of ``fn`` on the same inputs, waiting for the GPU when there is one."""
    x, mean = case.make_inputs(device, **SIZES)
    if device == "cuda":
        def run():
            out = fn(x, mean)
            torch.cuda.synchronize()
            return out
        return run
    return lambda: fn(x, mean)


def _expected(device):
    x, mean = case.make_inputs(device, **SIZES)
    return x - mean[:, None, None]  # aligned from the right: [C, 1, 1] against [N, C, H, W]


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_broken_subtract_in_a_loop(benchmark, device):
    out = benchmark(_call(case.subtract_in_a_loop, device))
    torch.testing.assert_close(out, _expected(device))


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_fixed_subtract_broadcast(benchmark, device):
    out = benchmark(_call(case.subtract_broadcast, device))
    torch.testing.assert_close(out, _expected(device))
