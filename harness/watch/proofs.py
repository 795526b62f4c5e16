"""Each detector run on its case's variants in this interpreter, on this torch: the broken code
must be reported with the case's id at a line of the case file, the fixed code and the near miss
must not be, and the detector must not fail. tests/watch/test_proofs.py asserts it on the local
torch; ``python -m harness.watch.proofs --json PATH`` records it for another release (the
matrix build's ``--watch-proofs``), so which releases each detector works on is observed.
"""
from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from harness.loader import default_cases_dir, load_cases
from harness.watch.session import watch


def watched(fn, **options):
    """The watcher around one variant run on the CPU, its own warnings kept out of the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch(explain=False, **options) as w:
            try:
                result = fn("cpu")
            except Exception:  # a broken variant may raise: that is its symptom, not the watcher's
                result = None
            del result  # outputs die here (by reference count), as they would in the user's program
    return w


def prove(detector, lc) -> dict:
    """What ``detector`` (a class) did on the variants of its case ``lc``."""
    only = dict(select=(detector.case,), pedantic=detector.pedantic)
    w = watched(lc.module.broken, **only)
    at_case = [f for f in w.findings if f.case == detector.case and Path(f.path).resolve() == lc.path.resolve()]
    result = {"case": detector.case, "pedantic": detector.pedantic, "broken_reported": bool(at_case),
              "broken_lines": sorted({f.line for f in at_case}), "errors": list(w.errors), "silent_on": {}}
    for variant in ("fixed", "near_miss"):
        fn = getattr(lc.module, variant, None)
        if fn is not None:
            v = watched(fn, **only)
            result["silent_on"][variant] = not v.findings
            result["errors"] += v.errors
    result["proven"] = result["broken_reported"] and all(result["silent_on"].values()) and not result["errors"]
    return result


def prove_all(cases_dir: Path | None = None) -> dict:
    import torch

    from harness.watch.detectors import all_detectors

    cases = {lc.id: lc for lc in load_cases(Path(cases_dir or default_cases_dir()))}
    proofs = [prove(d, cases[d.case]) for d in all_detectors()]
    return {"torch": torch.__version__, "python": sys.version.split()[0], "detectors": proofs,
            "proven": sum(p["proven"] for p in proofs), "total": len(proofs)}


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m harness.watch.proofs", description=__doc__.split("\n")[0])
    p.add_argument("--json", metavar="PATH", help="also write the record here")
    p.add_argument("--cases", metavar="DIR", help="the cases folder (default: ./cases or the installed corpus)")
    args = p.parse_args(argv)
    record = prove_all(args.cases)
    for proof in record["detectors"]:
        state = "proven" if proof["proven"] else "NOT proven"
        why = "" if proof["proven"] else f"  broken reported: {proof['broken_reported']}, silent on: " \
                                          f"{proof['silent_on']}, errors: {proof['errors'][:1]}"
        print(f"{proof['case']:40s} {state}{why}")
    print(f"torch {record['torch']}: {record['proven']} of {record['total']} detectors proven")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0 if record["proven"] == record["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
