"""Benchmark pair for the case cpu-tensor-moved-to-cuda: zeros made on the host and then moved
(``torch.zeros(3, 3).to(device)``) against zeros made on the device (``torch.zeros(3, 3,
device=device)``), on every available device.

The two functions come from the case module itself, so the benchmark times the exact code whose
mechanism the case checks. On CUDA each call ends with ``torch.cuda.synchronize()``, so both
variants are charged for their GPU work and not only for queueing it. On the CPU the pair shows
the contrast: there is nothing to move, and the two should time alike.

Time only: the cost is a copy and the wait for the stream, not memory (36 bytes either way).
"""

import pytest
from case_modules import DEVICES, case_module, pair, synchronized

GROUP = "cpu-tensor-moved-to-cuda"

case = case_module(GROUP)


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_broken_zeros_then_move(benchmark, device):
    pair(benchmark, GROUP, device, "broken")
    out = benchmark(synchronized(case.zeros_then_move, device), device)
    assert out.device.type == device and out.shape == (3, 3)


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_fixed_zeros_on_device(benchmark, device):
    pair(benchmark, GROUP, device, "fixed")
    out = benchmark(synchronized(case.zeros_on_device, device), device)
    assert out.device.type == device and out.shape == (3, 3)
