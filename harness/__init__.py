"""torch-pitfalls: the harness that runs, checks and reports the corpus of PyTorch pitfalls.

A case module needs only what is exported here. What needs torch is imported when first used
(PEP 562), so `pitfalls lint` starts without torch's import time and `pitfalls` says "torch is
not installed" in one line where it is missing.
"""

from torch_pitfalls.case import Affects, Case, Source
from torch_pitfalls.casefile import HELPER_MODULES

_LAZY = HELPER_MODULES  # name -> the module that defines it, imported when first used

__all__ = [
    "Affects",
    "Case",
    "communicate",
    "Observation",
    "Source",
    "observe",
    "ops_called",
    "run_python",
    "run_pythons",
    "saved_bytes",
    "seeded",
]
__version__ = "0.1.0"


def __getattr__(name: str):
    if name in _LAZY:
        import importlib

        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'torch_pitfalls' has no attribute {name!r}")
