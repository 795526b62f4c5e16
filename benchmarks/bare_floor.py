"""The floor the harness is measured against: a bare interpreter that imports torch and runs
each given case module's broken and fixed variant once on the CPU, and the fix's check on the
fixed result (the assertion that used to end `fixed`), with nothing around them: no time limit,
no state probes, no symptom predicate, no check of the broken result, no report. Variants that start their own
interpreters (seed-every-rng, the python cases) do so here too, so both sides pay for that.

usage: python benchmarks/bare_floor.py CASE_FILE ...
"""

import importlib.util
import sys
from types import SimpleNamespace

import torch  # noqa: F401  (imported once, as the harness does)

# Every module is imported first, as the harness loads the corpus before running any of it.
modules = []
for n, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location(f"floor_case_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the harness's loader does: dataclasses look it up
    spec.loader.exec_module(module)
    modules.append(module)

for module in modules:  # the caller passes only the cases the harness runs (runner.not_run_reason)
    try:
        module.broken("cpu")
    except Exception:  # a broken variant may raise: that is its symptom
        pass
    value = module.fixed("cpu")
    module.check(SimpleNamespace(value=value, error=None, warnings=[], output="", output_chars=0), "cpu")
