"""torch-pitfalls: the harness that runs, checks and reports the corpus of PyTorch pitfalls.

A case module needs only what is exported here. What needs torch is imported when first used
(PEP 562), so `pitfalls lint` starts without torch's import time and `pitfalls` says "torch is
not installed" in one line where it is missing.
"""
from torch_pitfalls.case import Affects, Case, Source

_LAZY = {"ops_called": "torch_pitfalls.helpers", "run_python": "torch_pitfalls.helpers", "run_pythons": "torch_pitfalls.helpers",
         "saved_bytes": "torch_pitfalls.helpers", "seeded": "torch_pitfalls.helpers",
         "Observation": "torch_pitfalls.observation", "observe": "torch_pitfalls.observation"}

__all__ = ["Affects", "Case", "Observation", "Source", "observe", "ops_called", "run_python", "run_pythons", "saved_bytes", "seeded"]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'harness' has no attribute {name!r}")
