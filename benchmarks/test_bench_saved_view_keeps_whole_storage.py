"""Benchmark pair for the case `saved-view-keeps-whole-storage`: saving five elements of a
100,000-element table as a view (the whole 400 kB storage goes to the file and comes back on
load) and as a clone (20 bytes of data), with the case module's own `saved_size`, on every
available device. Run with ``pytest benchmarks/ --benchmark-only``. The bytes written are the
case's deterministic measure (the file is about 250 times larger); the time of a save and a load
follows them, and on CUDA also includes copying the whole storage to the host.
"""

import pytest
import torch
from case_modules import DEVICES, case_module, pair, synchronized

GROUP = "saved-view-keeps-whole-storage"

case = case_module(GROUP)


@pytest.fixture(scope="module", params=DEVICES)
def device_and_table(request):
    return request.param, torch.arange(case.N, dtype=torch.float32, device=request.param)


@pytest.mark.benchmark(group=GROUP)
def test_broken_saves_the_view(benchmark, device_and_table):
    device, table = device_and_table
    head = table[: case.KEEP]
    out = benchmark(synchronized(case.saved_size, device), head)
    pair(benchmark, GROUP, device, "broken", file_bytes=out["file_bytes"])
    assert out["file_bytes"] >= case.N * 4


@pytest.mark.benchmark(group=GROUP)
def test_fixed_saves_a_clone(benchmark, device_and_table):
    device, table = device_and_table
    head = table[: case.KEEP].clone()
    out = benchmark(synchronized(case.saved_size, device), head)
    pair(benchmark, GROUP, device, "fixed", file_bytes=out["file_bytes"])
    assert out["file_bytes"] < case.N
