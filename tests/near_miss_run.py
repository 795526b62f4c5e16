"""Every case's ``near_miss(device)`` run on the CPU as the runner runs a variant (RNGs seeded,
global state guarded), and what the case's ``symptom`` says of that run, written as JSON:
``python tests/near_miss_run.py OUT.json``.

A background run of ``make test`` (tests/background.py): the near misses of the cases that start
other interpreters take seconds each, and tests/case/test_predicates.py only needs the verdicts.
"""
from __future__ import annotations

import json
import sys
import traceback
from pathlib import Path

from harness.loader import load_corpus
from harness.run.runner import run_variant

ROOT = Path(__file__).resolve().parents[1]


def judge(lc) -> dict:
    run = run_variant(lc.module.near_miss, "cpu", lc.case.timeout, "near-miss")
    verdict = {"summary": run.summary(),
               "something_to_judge": run.error is not None or bool(run.warnings) or run.value is not None}
    try:
        verdict["accepted"] = bool(lc.module.symptom(run))
    except Exception:  # noqa: BLE001 (a symptom that raises is reported, not a crash of the run)
        verdict["symptom_raised"] = traceback.format_exc(limit=4)
    return verdict


def main(out: Path) -> int:
    cases, _ = load_corpus(ROOT / "cases")
    verdicts = {lc.id: judge(lc) for lc in cases if callable(getattr(lc.module, "near_miss", None))}
    tmp = out.with_suffix(".partial")
    tmp.write_text(json.dumps(verdicts, indent=1), encoding="utf-8")
    tmp.rename(out)  # whole or absent
    return 0


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1])))
