"""Order and parallelism: the corpus gives the same outcome for every case × device whether it
runs in file order, in a random order or on two xdist workers.

The corpus is the whole real one (a temp copy), cpu and cuda items both: on a CPU machine the
cuda items skip at once, so the whole corpus costs what its ~65 cpu items cost (about 15 s a run
here, five runs in this module and the faults one), and on the GPU lane the cuda items, with
their allocator and context state, are the ones most likely to depend on what ran before, so a
subset would drop exactly what this is for. Beside it: ``rng-probe-*`` cases, which depend on
the global RNG state and nothing else, and a plain test that moves every global generator, as
a test sharing `make test`'s session may (see ``planting.plant_rng_probes``).
"""
from __future__ import annotations

import random
import re

import pytest

from harness.report import load_report
from planting import differences, outcomes, run_pytest

TOTALS_LINE = re.compile(r"^\d+ runs of \d+ cases: .*$", re.MULTILINE)
SUMMARY_TABLE = re.compile(r"^=+ torch-pitfalls =+\n(.*?)^\d+ runs of", re.MULTILINE | re.DOTALL)


def test_every_variant_draws_what_reseeding_draws(plain_run):
    """Every variant starts from the harness's seed (torch's, Python's and NumPy's generators),
    whatever the process did before it: the probes' bits are those of the reseeded draw."""
    got = outcomes(plain_run.report)
    probes = {key: outcome for key, outcome in got.items() if key[0] in plain_run.probes and key[1] == "cpu"}
    assert len(probes) == len(plain_run.probes)
    assert set(probes.values()) <= {"reproduced", "absent"}, probes


@pytest.mark.parametrize("run", [1, 2, 3])
def test_a_random_order_gives_the_plain_outcomes(plain_run, run):
    seed = random.SystemRandom().randrange(2**31)  # a new order each time; printed to replay it
    print(f"random order run {run}: --random-order-bucket=global --random-order-seed={seed}")
    name = f"random-{run}.json"
    proc = run_pytest(plain_run.root, *plain_run.args, "--random-order-bucket=global",
                      f"--random-order-seed={seed}", "--pitfalls-json", name)
    assert f"--random-order-seed={seed}" in proc.stdout  # the plugin did shuffle, with this seed
    changed = differences(outcomes(plain_run.report), outcomes(load_report(plain_run.root / name)))
    assert not changed, f"with --random-order-seed={seed}:\n" + "\n".join(changed)


def test_two_xdist_workers_give_the_plain_outcomes_in_one_report_and_one_table(plain_run):
    proc = run_pytest(plain_run.root, *plain_run.args, "-n", "2", "--pitfalls-json", "xdist.json")
    assert "2 workers [" in proc.stdout  # it did run on two workers
    assert "report written to xdist.json" in proc.stdout
    changed = differences(outcomes(plain_run.report), outcomes(load_report(plain_run.root / "xdist.json")))
    assert not changed, "\n".join(changed)
    # the controller's summary table: the plain run's totals line, and a row for every case
    assert TOTALS_LINE.findall(proc.stdout) == TOTALS_LINE.findall(plain_run.proc.stdout) != []
    (table,) = SUMMARY_TABLE.findall(proc.stdout)
    rows = {line.split()[0] for line in table.splitlines()[2:]}
    assert rows == {case for case, _ in outcomes(plain_run.report)}
