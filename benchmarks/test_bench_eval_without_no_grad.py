"""Benchmark pair for the case `eval-without-no-grad`: the same validation forward, with and
without gradient recording, on the case's own model and batch, on every available device. The
case module's own functions are the ones timed here. Run with ``pytest benchmarks/ --benchmark-only``.
The case's sizes on purpose: a call takes tens of microseconds, so each half gets thousands of
rounds and its median holds on a shared machine. (A 512 x 1024 -> 4096 model timed alike too,
ratio 1.00: recording the graph costs little time next to the matrix products. Its cost is memory.)

Peak memory of two validation steps in a row (``out = validate(model, x)`` twice, as any
validation loop runs them): the previous step's output is still bound while the next forward
runs, and without ``no_grad`` it keeps alive the activations its graph saved for a backward that
never comes. That is where the forgotten ``no_grad`` costs memory in this two-layer model; a
single forward peaks alike with and without it (the hidden activation and the ReLU's output).
"""

import pytest
from case_modules import DEVICES, case_module, pair, synchronized
from peak_memory import peak_bytes

GROUP = "eval-without-no-grad"

case = case_module(GROUP)


@pytest.fixture(scope="module", params=DEVICES)
def device_model_and_batch(request):
    return request.param, *case.make_model_and_batch(request.param)


def _bench(benchmark, validate, device, model, x, variant):
    def two_steps():
        out = validate(model, x)
        out = validate(model, x)  # noqa: F841  (rebound only once this forward has run)

    pair(benchmark, GROUP, device, variant, peak_bytes=peak_bytes(two_steps, device))
    return benchmark(synchronized(validate, device), model, x)


@pytest.mark.benchmark(group=GROUP)
def test_broken_records_graph(benchmark, device_model_and_batch):
    device, model, x = device_model_and_batch
    out = _bench(benchmark, case.validate, device, model, x, "broken")
    assert out.grad_fn is not None


@pytest.mark.benchmark(group=GROUP)
def test_fixed_no_grad(benchmark, device_model_and_batch):
    device, model, x = device_model_and_batch
    out = _bench(benchmark, case.validate_no_grad, device, model, x, "fixed")
    assert out.grad_fn is None
