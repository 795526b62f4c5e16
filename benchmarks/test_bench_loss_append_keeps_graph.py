"""Benchmark pair for the case `loss-append-keeps-graph`: the case's own training loop, run
for more steps, recording the loss tensor (broken) or `loss.item()` (fixed), on every available
device. Each round starts from a fresh, identical model and the same batches. The case module's
own functions are the ones timed here. Run with ``pytest benchmarks/ --benchmark-only``.

Peak memory of the loop beyond its inputs (model, optimizer, batches made before it starts): the
kept loss tensors and their storage grow with every step, where the fixed loop holds floats. The
graph nodes each kept loss also holds live outside torch's allocator and are not in this count;
the case itself checks that they stay reachable.
"""

import pytest
from case_modules import DEVICES, case_module, pair, synchronized
from peak_memory import peak_bytes

case = case_module("loss-append-keeps-graph")

GROUP = "loss-append-keeps-graph"
# Shown on the performance page beside a ratio below 1 (docs.site.bench_page reads it).
WHY_THE_FIX_COSTS = (
    "on a GPU, loss.item() copies each loss to the host and so waits for the step to finish; the broken loop "
    "does not wait. The fix buys memory (the kept graphs), not time."
)
STEPS = 128
KEEP = {"broken": lambda loss: loss, "fixed": lambda loss: loss.item()}


def _peak(device, variant, steps):
    problem = case.problem(device, steps=steps)
    return peak_bytes(lambda: case.train(*problem, keep=KEEP[variant]), device)


def _bench(benchmark, device, variant):
    keep = KEEP[variant]
    pair(benchmark, GROUP, device, variant, peak_bytes=_peak(device, variant, STEPS))
    # pedantic's setup: a new model/optimizer/batches for every round, the same each time
    fresh = lambda: (case.problem(device, steps=STEPS), {"keep": keep})  # noqa: E731
    return benchmark.pedantic(synchronized(case.train, device), setup=fresh, rounds=60)


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_broken_appends_loss_tensor(benchmark, device):
    losses = _bench(benchmark, device, "broken")
    roots, _ = case.graph_nodes(losses)
    assert len(roots) == STEPS  # every step's graph is still reachable
    assert _peak(device, "broken", 2 * STEPS) > benchmark.extra_info["peak_bytes"]  # grows with the steps


@pytest.mark.benchmark(group=GROUP)
@pytest.mark.parametrize("device", DEVICES)
def test_fixed_appends_item(benchmark, device):
    losses = _bench(benchmark, device, "fixed")
    assert all(isinstance(v, float) for v in losses)
    assert _peak(device, "fixed", 2 * STEPS) == benchmark.extra_info["peak_bytes"]  # does not grow
