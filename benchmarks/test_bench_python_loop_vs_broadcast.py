"""Benchmark pair for the case python-loop-vs-broadcast: a per-channel mean subtracted in a Python
loop over the channels and stacked back, against one broadcast subtraction, on every available
device.

Both functions and the inputs come from the case module itself, so the benchmark times the exact
code whose mechanism (one ``aten::sub`` per channel against one in all) the case checks. The
batch here is larger than in the case, ``[32, 64, 16, 16]``, so the loop runs 64 times. On CUDA
each call ends with ``torch.cuda.synchronize()``, so both variants are charged for their GPU work.

Peak memory too: the loop holds every channel's difference until ``torch.stack`` copies them into
the result, so at its peak it holds the output twice; the broadcast writes the output once.
"""

import pytest
import torch
from case_modules import DEVICES, case_module, pair, synchronized
from peak_memory import peak_bytes

GROUP = "python-loop-vs-broadcast"
SIZES = dict(n=32, c=64, h=16, w=16)

case = case_module(GROUP)


def _bench(benchmark, fn, device, variant):
    x, mean = case.make_inputs(device, **SIZES)
    call = synchronized(fn, device)
    pair(benchmark, GROUP, device, variant, peak_bytes=peak_bytes(lambda: call(x, mean), device))
    return benchmark(call, x, mean)


def _expected(device):
    x, mean = case.make_inputs(device, **SIZES)
    return x - mean[:, None, None]  # aligned from the right: [C, 1, 1] against [N, C, H, W]


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_broken_subtract_in_a_loop(benchmark, device):
    out = _bench(benchmark, case.subtract_in_a_loop, device, "broken")
    torch.testing.assert_close(out, _expected(device))
    assert benchmark.extra_info["peak_bytes"] == 2 * out.nbytes  # the 64 slices, and the stack of them


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_fixed_subtract_broadcast(benchmark, device):
    out = _bench(benchmark, case.subtract_broadcast, device, "fixed")
    torch.testing.assert_close(out, _expected(device))
    assert benchmark.extra_info["peak_bytes"] == out.nbytes  # the output alone
