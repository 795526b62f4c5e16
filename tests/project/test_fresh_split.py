"""The fresh probe material's split (benchmarks/fresh/split.toml) is the one its recorded seed gives,
over the files on disk, and a changed seed is refused."""

from __future__ import annotations

import sys

import tomllib
from planting import ROOT

FRESH = ROOT / "benchmarks" / "fresh"
sys.path.insert(0, str(FRESH))

from split import halves  # noqa: E402


def test_the_recorded_halves_are_the_seeds():
    record = tomllib.loads((FRESH / "split.toml").read_text(encoding="utf-8"))
    on_disk = {
        "lint": sorted(p.name for p in (FRESH / "lint").glob("s[0-9][0-9]_*.py")),
        "watch": sorted({p.name[:3] for p in (FRESH / "watch").glob("p[0-9][0-9]_*.py")}),
    }
    for kind, names in on_disk.items():
        rec = record[kind]
        assert sorted(rec["names"]) == names and len(names) >= 14
        assert halves(rec["names"], record["seed"]) == (rec["tuning"], rec["held_out"])
        assert halves(rec["names"], record["seed"] + 1) != (rec["tuning"], rec["held_out"])
