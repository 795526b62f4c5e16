"""torch-pitfalls: the harness that runs, checks and reports the corpus of PyTorch pitfalls.

A case module needs only what is exported here.
"""
from harness.case import Affects, Case, Source

try:
    from harness.helpers import ops_called, run_python, run_pythons, saved_bytes, seeded
    from harness.observe import Observation, observe
except ModuleNotFoundError as exc:  # no torch: `pitfalls` and the pytest plugin say so in one line
    if exc.name != "torch":
        raise

__all__ = ["Affects", "Case", "Observation", "Source", "observe", "ops_called", "run_python", "run_pythons", "saved_bytes", "seeded"]
__version__ = "0.1.0"
