"""The floor the harness is measured against: a bare interpreter that imports torch and runs
each given case module's broken and fixed variant once on the CPU, with nothing around them.

usage: python benchmarks/bare_floor.py CASE_FILE ...
"""
import importlib.util
import sys

import torch  # noqa: F401  (imported once, as the harness does)

for n, path in enumerate(sys.argv[1:]):
    spec = importlib.util.spec_from_file_location(f"floor_case_{n}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    for variant in (module.broken, module.fixed):
        try:
            variant("cpu")
        except Exception:  # a broken variant may raise: that is its symptom
            pass
