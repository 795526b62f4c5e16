"""Benchmark pair for the case `eval-without-no-grad`: the same validation forward, with and
without gradient recording, on the same model and batch (larger than the case's own, so the
difference is measurable). The case module is imported by path, so its functions are the ones
timed here. Run with ``pytest benchmarks/ --benchmark-only``.
"""

import pytest

from case_modules import case_module

case = case_module("eval-without-no-grad")

GROUP = "eval-without-no-grad"


@pytest.fixture(scope="module")
def model_and_batch():
    return case.make_model_and_batch("cpu", batch=512, width=1024, hidden=4096)


@pytest.mark.benchmark(group=GROUP)
def test_broken_records_graph(benchmark, model_and_batch):
    model, x = model_and_batch
    out = benchmark(case.validate, model, x)
    assert out.grad_fn is not None


@pytest.mark.benchmark(group=GROUP)
def test_fixed_no_grad(benchmark, model_and_batch):
    model, x = model_and_batch
    out = benchmark(case.validate_no_grad, model, x)
    assert out.grad_fn is None
