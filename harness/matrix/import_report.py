"""``pitfalls import-report FILE``: file a report made on someone else's machine into the matrix.

A contributed run (a GPU, another CPU, another Python) is checked before it is filed:

* the file is a whole, schema-valid report of this schema version (``load_report``);
* every record names a case this checkout has (an unknown id refuses the whole file);
* its torch is a release of the matrix (a nightly or a local build has no column);
* each record's case hash is compared with this checkout: a record made from another text of
  the case is kept, listed as stale, and shows as stale in the matrix until re-run.

Each device kind that ran is filed as its own report,
``reports/torch-<release>-<kind>-<model>.json`` (e.g. ``torch-2.11.0-cuda-nvidia-h100-80gb-hbm3``),
whose matrix column is ``<kind>:<model>``. Everything is checked before anything is written, and
each file is written atomically: a refused import writes nothing.
"""

from __future__ import annotations

import datetime as dt
import re
import sys
from collections import Counter
from pathlib import Path

from torch_pitfalls.matrix import DEFAULT_VERSIONS, case_sources, device_label, report_path
from torch_pitfalls.run.provenance import describe
from torch_pitfalls.run.report import FAILING, ReportError, load_report, write_report
from torch_pitfalls.versions import release_of


class ImportRefused(Exception):
    """The report cannot be filed; the message says why, in one line."""


def model_slug(text: str) -> str:
    """``NVIDIA H100 80GB HBM3`` -> ``nvidia-h100-80gb-hbm3``: a file name's and a column's part."""
    slug = re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")
    return slug[:60].rstrip("-") or "unknown"


def model_of(report: dict, kind: str) -> str:
    """The device model a report ran ``kind`` on: its provenance, else its device names."""
    prov = report.get("provenance") or {}
    if kind == "cpu":
        model = (prov.get("cpu") or {}).get("model")
    else:
        model = (prov.get("accelerator") or {}).get("model")
    return model or report["devices"].get(kind) or "unknown"


def plan(path: Path, reports: Path, cases_dir: Path) -> list[tuple[Path, dict, list[str]]]:
    """(target, report, stale case ids) for each device kind the report ran; raises
    ImportRefused without writing anything."""
    try:
        report = load_report(path)
    except ReportError as exc:
        raise ImportRefused(str(exc)) from None
    sources = {c.id: c.sha256 for c in case_sources(cases_dir)}
    unknown = sorted({r["case"] for r in report["records"]} - sources.keys())
    if unknown:
        raise ImportRefused(
            f"{path}: records of cases this checkout does not have: {', '.join(unknown[:5])}"
            + (f" and {len(unknown) - 5} more" if len(unknown) > 5 else "")
        )
    release = str(release_of(report["torch"]))
    if release not in DEFAULT_VERSIONS:
        raise ImportRefused(
            f"{path}: torch {report['torch']} is not a release of the matrix "
            f"({DEFAULT_VERSIONS[0]} ... {DEFAULT_VERSIONS[-1]})"
        )
    kinds = sorted({r["device"] for r in report["records"] if r["outcome"] != "skipped"})
    if not kinds:
        raise ImportRefused(f"{path}: no device ran: every record is skipped")
    out = []
    for kind in kinds:
        records = [r for r in report["records"] if r["device"] == kind]
        stale = sorted(r["case"] for r in records if r["source_sha256"] != sources[r["case"]])
        filed = {
            **report,
            "records": records,
            "totals": dict(Counter(r["outcome"] for r in records)),
            "imported": {
                "file": path.name,
                "at": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
                "stale": stale,
            },
        }
        target = report_path(reports, release, device_label(kind, model_slug(model_of(report, kind))))
        out.append((target, filed, stale))
    return out


def run_import(args) -> int:
    path, reports = Path(args.file), Path(args.reports)
    try:
        if not reports.is_dir():
            raise ImportRefused(f"{reports}: no such reports folder")
        planned = plan(path, reports, Path(args.cases))
        clash = [str(t) for t, _, _ in planned if t.exists() and not args.replace]
        if clash:
            raise ImportRefused(f"{', '.join(clash)} exists (--replace files the new run over it)")
    except ImportRefused as exc:
        print(f"pitfalls: error: {exc}", file=sys.stderr)
        return 2
    for target, filed, stale in planned:
        write_report(filed, target)
        kind = filed["records"][0]["device"]
        failing = [r for r in filed["records"] if r["outcome"] in FAILING]
        print(
            f"{target}: {len(filed['records'])} records of {filed['torch']} on {describe(filed.get('provenance'), kind)}"
        )
        if stale:
            print(f"  stale (recorded from another text of the case; shown as stale until re-run): {', '.join(stale)}")
        for r in failing:
            print(f"  {r['outcome']}: {r['case']}: {r['detail']}")
    return 0
