"""Order, parallelism and stability: the corpus gives the same outcome, and the same fingerprint,
for every case × device whether it runs in file order, in a random order or on two xdist workers.

The random-order run is the whole real corpus (a temp copy), cpu and cuda items both: on the GPU
lane the cuda items, with their allocator and context state, are the ones most likely to depend
on what ran before. It is compared with the plain run of the same session (``clean_records``).
Beside it: ``rng-probe-*`` cases, which depend on the global RNG state and nothing else, and a
plain test that moves every global generator, as a test sharing `make test`'s session may (see
``planting.plant_rng_probes``). The same run is shared by two xdist workers (one run, not two):
their records must merge into one report and one table.
"""

from __future__ import annotations

import re
from collections import Counter

from planting import copied_case_ids, differences, real_case_ids

TOTALS_LINE = re.compile(r"^\d+ runs of \d+ cases: .*$", re.MULTILINE)
SUMMARY_TABLE = re.compile(r"^=+ torch-pitfalls =+\n(.*?)^\d+ runs of", re.MULTILINE | re.DOTALL)


def _outcomes(records, keep) -> dict:
    return {key: r["outcome"] for key, r in records.items() if key[0] in keep}


def _by_key(report: dict) -> dict:
    return {(r["case"], r["device"]): r for r in report["records"]}


def test_every_variant_draws_what_reseeding_draws(random_run):
    """Every variant starts from the harness's seed (torch's, Python's and NumPy's generators),
    whatever ran before it: the probes' bits are those of the reseeded draw."""
    ids = random_run.extra["probes"]
    probes = {k: r["outcome"] for k, r in _by_key(random_run.report).items() if k[0] in ids and k[1] == "cpu"}
    assert len(probes) == len(ids)
    assert set(probes.values()) <= {"reproduced", "absent"}, probes


def test_a_random_order_gives_the_plain_outcomes(random_run, clean_records):
    real = real_case_ids()
    changed = differences(_outcomes(clean_records, real), _outcomes(_by_key(random_run.report), real))
    assert not changed, f"with --random-order-seed={random_run.extra['seed']}:\n" + "\n".join(changed)


def test_fingerprints_are_stable_across_runs_and_orders(random_run, clean_records):
    """What a user observes of each variant is the same in two runs of the same torch (here a
    plain and a shuffled one): a change the matrix reports is a change of torch, not noise."""
    got = _by_key(random_run.report)
    unstable = []
    compared = 0
    for key, record in sorted(clean_records.items()):
        if record["fingerprints"] is None:  # skipped or unverified before anything ran
            continue
        other = got.get(key)
        compared += 1
        for variant in ("broken", "fixed"):
            a, b = record["fingerprints"].get(variant), ((other or {}).get("fingerprints") or {}).get(variant)
            if a != b:  # the same torch, the same machine: equal, not merely close
                unstable.append(f"{key[0]} [{key[1]}] {variant}: {a} != {b}")
    ran = {case for (case, device), r in clean_records.items() if r["outcome"] not in ("skipped", "unverified")}
    assert compared >= len(ran) > len(real_case_ids()) / 2  # every case that ran at all
    assert not unstable, "\n".join(unstable)


def test_two_xdist_workers_give_the_plain_outcomes_in_one_report_and_one_table(xdist_run, clean_records):
    proc, report, probes = xdist_run.proc, xdist_run.report, xdist_run.extra["probes"]
    assert "2 workers [" in proc.stdout  # it did run on two workers
    assert "report written to random.json" in proc.stdout
    real = copied_case_ids(xdist_run.corpus)
    changed = differences(_outcomes(clean_records, real), _outcomes(_by_key(report), real))
    assert not changed, "\n".join(changed)
    assert {r["outcome"] for r in report["records"] if r["case"] in probes and r["device"] == "cpu"} <= {
        "reproduced",
        "absent",
    }
    # the controller's summary: one totals line, that of the whole report, and a row for every case
    totals = Counter(r["outcome"] for r in report["records"])
    (line,) = TOTALS_LINE.findall(proc.stdout)
    assert line.startswith(f"{len(report['records'])} runs of {len(real) + len(probes)} cases: ")
    assert all(f"{n} {outcome}" in line for outcome, n in totals.items())
    (table,) = SUMMARY_TABLE.findall(proc.stdout)
    rows = {row.split()[0] for row in table.splitlines()[2:]}
    assert rows == real | set(probes)
