"""What the harness costs, recorded under ``pitfalls.harness`` in the benchmark JSON:

* ``pitfalls run --device cpu -q`` on the whole corpus against the bare floor (``bare_floor.py``:
  one interpreter running every runnable case's broken and fixed variant once). Both are whole
  processes, interpreter start and torch import included. The floor runs exactly the variants the
  harness runs on the CPU (cases the harness skips, for a missing optional module, are left out
  of it), and variants that start their own interpreters (seed-every-rng, the python cases) start
  them on both sides. The goal is an overhead of at most 2x.
* How the run time grows with the number of cases: every 4th case, every 2nd, all (nested, spread
  over every topic), each with its own floor. A few cases start interpreters and cost seconds
  where the rest cost milliseconds, so no fraction of the corpus holds the same fraction of the
  work: the floor of the same subset says how much of the time is the cases' own.
* Seconds are CPU seconds (user + system of the process and every child it waited for), with the
  wall seconds recorded beside them: the machine may be shared (a matrix build runs beside this
  one), and a few cases' wall time (those starting interpreters) then swings by 2x from one run
  to the next, where their CPU time does not. Nothing in either side sleeps or waits on anything
  but its own children, so on a quiet machine the two clocks agree.
* The peak resident memory of the whole-corpus run: ``ru_maxrss`` from ``os.wait4`` in
  ``measure.py``, the largest of the process and every child it waited for (the children's not
  added to it). It must stay under 1.5 GB.

All runs alternate in every round, so each sees the same machine load, and each figure is the
fastest of the rounds: other work on the machine only ever adds time.
"""

import json
import os
import subprocess
import sys
import tempfile
from typing import NamedTuple

import pytest
from case_modules import _CASES, ROOT
from summary import RSS_BUDGET_BYTES

from torch_pitfalls.run.runner import not_run_reason

CORPUS = list(_CASES.values())  # in the harness's own order
SUBSETS = {len(CORPUS[::4]): CORPUS[::4], len(CORPUS[::2]): CORPUS[::2], len(CORPUS): CORPUS}
ROUNDS = 2


def harness_cmd(cases):
    ids = [] if cases is CORPUS else [lc.id for lc in cases]  # the whole corpus: as `make run` does
    return [sys.executable, "-m", "torch_pitfalls", "run", *ids, "--device", "cpu", "-q"]


def floor_cmd(cases):
    files = [str(lc.path) for lc in cases if not_run_reason(lc, "cpu") is None]
    return [sys.executable, str(ROOT / "benchmarks" / "bare_floor.py"), *files]


class Run(NamedTuple):
    seconds: float  # wall clock
    cpu_s: float  # user + system, children included
    rss_bytes: int


def timed(cmd) -> Run:
    """Run ``cmd`` from the repository root through ``measure.py`` (why: see there)."""
    with tempfile.TemporaryDirectory(prefix="pitfalls-bench-") as tmp:
        result = os.path.join(tmp, "run.json")
        measured = [sys.executable, str(ROOT / "benchmarks" / "measure.py"), result, *cmd]
        proc = subprocess.run(measured, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        if proc.returncode != 0:
            raise AssertionError(
                f"{' '.join(cmd[1:4])} ... exited with status {proc.returncode}:\n"
                f"{proc.stdout.decode(errors='replace')[-2000:]}"
            )
        with open(result) as fh:
            return Run(**json.load(fh))


@pytest.mark.benchmark(group="harness-overhead")
def test_pitfalls_run_against_the_bare_floor(benchmark):
    runs = {(n, side): [] for n in SUBSETS for side in ("harness", "floor")}

    def one_round():
        for n, cases in sorted(SUBSETS.items(), reverse=True):
            runs[n, "harness"].append(timed(harness_cmd(cases)))
            runs[n, "floor"].append(timed(floor_cmd(cases)))

    benchmark.pedantic(one_round, rounds=ROUNDS, iterations=1)
    cpu = {key: min(r.cpu_s for r in done) for key, done in runs.items()}
    wall = {key: min(r.seconds for r in done) for key, done in runs.items()}
    whole = len(CORPUS)
    peak_rss = max(r.rss_bytes for r in runs[whole, "harness"])
    benchmark.extra_info["harness"] = {
        "clock": "cpu",  # the seconds below are CPU seconds; wall seconds beside them
        "overhead_ratio": cpu[whole, "harness"] / cpu[whole, "floor"],
        "corpus_s": cpu[whole, "harness"],
        "floor_s": cpu[whole, "floor"],
        "corpus_wall_s": wall[whole, "harness"],
        "floor_wall_s": wall[whole, "floor"],
        "scaling": [
            {
                "cases": n,
                "seconds": cpu[n, "harness"],
                "per_case_s": cpu[n, "harness"] / n,
                "floor_s": cpu[n, "floor"],
                "wall_s": wall[n, "harness"],
                "floor_wall_s": wall[n, "floor"],
            }
            for n in sorted(SUBSETS)
        ],
        "peak_rss_bytes": peak_rss,
    }
    assert peak_rss < RSS_BUDGET_BYTES, f"a full cpu corpus run peaked at {peak_rss / 1e9:.2f} GB"
