"""Run the near misses of the cases named on the command line and judge each by its case's own
symptom; the verdicts are written as JSON to argv[1] once all are in.

tests/background.py starts this beside the foreground for the cases whose variants start other
interpreters (a launcher, spawned ranks, a fresh Python): each of those runs is seconds of waiting
on a child, which the foreground no longer waits for; tests/case/test_predicates.py reads the
verdicts. A run is what ``planting.variant_run`` makes in the foreground (``run_variant`` on the
CPU: RNGs seeded, global state guarded).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from planting import ROOT, variant_run

from torch_pitfalls.loader import load_corpus


def verdict(lc) -> dict:
    run = variant_run(lc, "near_miss")
    return {
        "produced": run.error is not None or bool(run.warnings) or run.value is not None,
        "accepted": bool(lc.module.symptom(run)),
        "summary": run.summary(),
    }


def main(out: Path, ids: list[str]) -> None:
    cases, _ = load_corpus(ROOT / "cases")
    by_id = {lc.id: lc for lc in cases}
    verdicts = {case_id: verdict(by_id[case_id]) for case_id in ids}
    partial = out.with_suffix(".partial")  # the reader never sees half a file
    partial.write_text(json.dumps(verdicts, indent=1), encoding="utf-8")
    partial.rename(out)


if __name__ == "__main__":
    main(Path(sys.argv[1]), sys.argv[2:])
