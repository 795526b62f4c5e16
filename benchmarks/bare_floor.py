"""The floor the harness is measured against: a bare interpreter that imports torch and runs
each given case module's broken and fixed variant once on the CPU, with nothing around them:
no time limit, no state probes, no symptom predicate, no report. Variants that start their own
interpreters (seed-every-rng, the python cases) do so here too, so both sides pay for that.

usage: python benchmarks/bare_floor.py CASE_FILE ...
"""
import importlib.util
import sys

import torch  # noqa: F401  (imported once, as the harness does)

# Every module is imported first, as the harness loads the corpus before running any of it.
modules = []
for n, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location(f"floor_case_{n}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as the harness's loader does: dataclasses look it up
    spec.loader.exec_module(module)
    modules.append(module)

for module in modules:
    for variant in (module.broken, module.fixed):
        try:
            variant("cpu")
        except Exception:  # a broken variant may raise: that is its symptom
            pass
