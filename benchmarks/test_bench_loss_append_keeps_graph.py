"""Benchmark pair for the case `loss-append-keeps-graph`: the case's own training loop, run
for more steps, recording the loss tensor (broken) or `loss.item()` (fixed). Each round starts
from a fresh, identical model and the same batches. The case module's own
functions are the ones timed here. Run with ``pytest benchmarks/ --benchmark-only``.

The case's claim is about memory (every kept loss keeps its graph), checked by the case
itself; this pair only shows what the two loops cost in time on this machine.
"""

import pytest

from case_modules import case_module

case = case_module("loss-append-keeps-graph")

GROUP = "loss-append-keeps-graph"
STEPS = 512


def fresh_run(keep):
    """pedantic's setup: a new model/optimizer/batches for every round, the same each time."""
    return lambda: ((case.problem("cpu", steps=STEPS),), {"keep": keep})


def run(problem, keep):
    return case.train(*problem, keep=keep)


@pytest.mark.benchmark(group=GROUP)
def test_broken_appends_loss_tensor(benchmark):
    losses = benchmark.pedantic(run, setup=fresh_run(lambda loss: loss), rounds=20)
    roots, _ = case.graph_nodes(losses)
    assert len(roots) == STEPS  # every step's graph is still reachable


@pytest.mark.benchmark(group=GROUP)
def test_fixed_appends_item(benchmark):
    losses = benchmark.pedantic(run, setup=fresh_run(lambda loss: loss.item()), rounds=20)
    assert all(isinstance(v, float) for v in losses)
