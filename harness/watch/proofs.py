"""Each detector run on its case's variants in this interpreter, on this torch: the broken code
must be reported with the case's id at a line of the case file, the fixed code and the near miss
must not be, and the detector must not fail. tests/watch/test_proofs.py asserts it on the local
torch; ``python -m torch_pitfalls.watch.proofs --json PATH`` records it for another release (the
matrix build's ``--watch-proofs``), so which releases each detector works on is observed.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from torch_pitfalls.loader import default_cases_dir, load_cases
from torch_pitfalls.watch.session import watch


def watched(fn, device="cpu", **options):
    """The watcher around one variant run on ``device``, its own warnings kept out of the way."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch(explain=False, **options) as w:
            try:
                result = fn(device)
            except Exception:  # a broken variant may raise: that is its symptom, not the watcher's
                result = None
            del result  # outputs die here (by reference count), as they would in the user's program
    return w


def prove(detector, lc, device="cpu") -> dict:
    """What ``detector`` (a class) did on the variants of its case ``lc``, run on ``device``."""
    only = dict(select=(detector.case,), pedantic=detector.pedantic)
    w = watched(lc.module.broken, device, **only)
    at_case = [f for f in w.findings if f.case == detector.case and Path(f.path).resolve() == lc.path.resolve()]
    result = {
        "case": detector.case,
        "pedantic": detector.pedantic,
        "broken_reported": bool(at_case),
        "broken_lines": sorted({f.line for f in at_case}),
        "errors": list(w.errors),
        "silent_on": {},
    }
    for variant in ("fixed", "near_miss"):
        fn = getattr(lc.module, variant, None)
        if fn is not None:
            v = watched(fn, device, **only)
            result["silent_on"][variant] = not v.findings
            result["errors"] += v.errors
    result["proven"] = result["broken_reported"] and all(result["silent_on"].values()) and not result["errors"]
    return result


def prove_all(cases_dir: Path | None = None, device: str = "cpu") -> dict:
    """Every detector proven on ``device``; a case that does not run there is left out (and named)."""
    import torch

    from torch_pitfalls.watch.detectors import all_detectors

    cases = {lc.id: lc for lc in load_cases(Path(cases_dir or default_cases_dir()))}
    detectors = all_detectors()
    proofs = [prove(d, cases[d.case], device) for d in detectors if device in cases[d.case].case.devices]
    record = {
        "torch": torch.__version__,
        "python": sys.version.split()[0],
        "detectors": proofs,
        "proven": sum(p["proven"] for p in proofs),
        "total": len(proofs),
    }
    if device != "cpu":  # the CPU record's shape is the matrix's, kept as it was
        record["device"] = {"kind": device, "name": torch.cuda.get_device_name(0)}
        record["not_on_device"] = sorted(d.case for d in detectors if device not in cases[d.case].case.devices)
    return record


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m torch_pitfalls.watch.proofs", description=__doc__.split("\n")[0])
    p.add_argument("--json", metavar="PATH", help="also write the record here")
    p.add_argument("--cases", metavar="DIR", help="the cases folder (default: ./cases or the installed corpus)")
    p.add_argument(
        "--device",
        default="cpu",
        choices=("cpu", "cuda"),
        help="where the variants run (default: cpu; cuda needs a GPU)",
    )
    args = p.parse_args(argv)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            p.error(f"--device cuda: CUDA is not available to torch {torch.__version__}")
    record = prove_all(args.cases, args.device)
    for proof in record["detectors"]:
        state = "proven" if proof["proven"] else "NOT proven"
        why = (
            ""
            if proof["proven"]
            else f"  broken reported: {proof['broken_reported']}, silent on: "
            f"{proof['silent_on']}, errors: {proof['errors'][:1]}"
        )
        print(f"{proof['case']:40s} {state}{why}")
    print(f"torch {record['torch']} on {args.device}: {record['proven']} of {record['total']} detectors proven")
    if args.json:
        Path(args.json).write_text(json.dumps(record, indent=1) + "\n", encoding="utf-8")
    return 0 if record["proven"] == record["total"] else 1


if __name__ == "__main__":
    sys.exit(main())
