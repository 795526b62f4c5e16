"""What the harness costs: ``pitfalls run`` on the seven ★ cases against the bare floor
(``bare_floor.py``: one interpreter running the same broken and fixed variants once), timed
side by side in one run. Both are whole processes, interpreter start and torch import included.
The ratio is stored in the benchmark JSON (``extra_info``) and printed; the goal is ≤ 2×.
"""
import csv
import statistics
import subprocess
import sys
import time

import pytest

from case_modules import ROOT, _CASES

STARS = [row["id"] for row in csv.DictReader((ROOT / "cases" / "catalogue.csv").open()) if row["star"]]
ROUNDS = 5


def run(cmd):
    subprocess.run(cmd, cwd=ROOT, check=True, capture_output=True)


@pytest.mark.benchmark(group="harness-overhead")
def test_pitfalls_run_against_the_bare_floor(benchmark):
    floor_cmd = [sys.executable, str(ROOT / "benchmarks" / "bare_floor.py"), *(str(_CASES[i].path) for i in STARS)]
    harness_cmd = [sys.executable, "-m", "harness", "run", *STARS, "--device", "cpu", "-q"]
    times = {"harness": [], "floor": []}

    def harness_then_floor():
        for name, cmd in (("harness", harness_cmd), ("floor", floor_cmd)):
            t0 = time.perf_counter()
            run(cmd)
            times[name].append(time.perf_counter() - t0)

    # The two alternate in every round, so both see the same machine load.
    benchmark.pedantic(harness_then_floor, rounds=ROUNDS, iterations=1, warmup_rounds=1)
    harness_s, floor_s = (statistics.median(times[k][-ROUNDS:]) for k in ("harness", "floor"))
    ratio = harness_s / floor_s
    benchmark.extra_info.update(harness_s=harness_s, floor_s=floor_s, ratio_to_floor=round(ratio, 3))
    print(f"\npitfalls run on {len(STARS)} cases: {harness_s:.2f} s; bare floor: {floor_s:.2f} s; ratio {ratio:.2f}x")
