"""What changes between two torch releases, corpus-wide (``pitfalls upgrade FROM TO``, whose
command line is in harness/matrix/cli.py).

Read from the recorded matrix (``reports/``), never by running anything: for each case, every
change first seen after FROM and up to TO (``Matrix.changes``), grouped by kind, and whether the
case's fixed variant passed on every release from FROM to TO (the portable spelling).
``--fail-on KIND[,KIND]`` exits 1 when a change of one of those kinds is present, so a CI job
can gate an upgrade on it.
"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from packaging.version import Version

from torch_pitfalls.matrix import NOT_OBSERVED, STALE, Matrix
from torch_pitfalls.matrix.changes import KINDS

SCHEMA_FILE = Path(__file__).with_name("upgrade.schema.json")


def upgrade(matrix: Matrix, start: str, end: str, device: str) -> dict:
    """The upgrade from ``start`` to ``end`` as data (the shape of ``upgrade.schema.json``)."""
    span = [v for v in matrix.versions if Version(start) <= Version(v) <= Version(end)]
    cases, unobserved = [], []
    for c in matrix.cases:
        gaps = [v for v in (start, end) if matrix.cell(c.id, v, device).status in (STALE, NOT_OBSERVED)]
        if gaps:
            unobserved.append({"case": c.id, "releases": gaps})
        found = matrix.changes(c.id, device, start=start, end=end)
        if found:
            cases.append(
                {
                    "case": c.id,
                    "topic": c.topic,
                    "portable_fix": matrix.portable_fix(c.id, device, span),
                    "changes": [ch.to_json() for ch in found],
                }
            )
    counted = Counter(ch["kind"] for case in cases for ch in case["changes"])
    return {
        "from": start,
        "to": end,
        "device": device,
        "releases": span,
        "by_kind": {k: counted[k] for k in KINDS if counted[k]},
        "cases": cases,
        "not_observed": unobserved,
    }


def text(result: dict) -> str:
    head = (
        f"torch {result['from']} -> {result['to']} on {result['device']} ({len(result['releases'])} releases recorded)"
    )
    if not result["cases"]:
        lines = [head, "no observed change in any case"]
    else:
        total = sum(result["by_kind"].values())
        n = len(result["cases"])
        lines = [
            head,
            f"{total} change{'s' if total != 1 else ''} in {n} case{'s' if n != 1 else ''}: "
            + ", ".join(f"{n} {k}" for k, n in result["by_kind"].items()),
        ]
        for kind in result["by_kind"]:
            lines.append("")
            lines.append(f"{kind}:")
            for case in result["cases"]:
                for ch in case["changes"]:
                    if ch["kind"] == kind:
                        lines.append(
                            f"  {case['case']} ({ch['variant']}, in {ch['since']}): {ch['before']} -> {ch['after']}"
                        )
        lines.append("")
        lines.append("portable fix (the fixed variant passed on every release of the span):")
        for case in result["cases"]:
            word = {True: "yes", False: "no", None: "not observed on every release"}[case["portable_fix"]]
            lines.append(f"  {case['case']}: {word}")
    if result["not_observed"]:
        lines.append("")
        lines.append(
            "not observed (stale or missing records): "
            + ", ".join(f"{u['case']} on {'/'.join(u['releases'])}" for u in result["not_observed"])
        )
    return "\n".join(lines)
