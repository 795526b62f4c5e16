"""The splits of the linter's precision measurement, each fixed before any finding is read (issue 38).

36 public libraries and applications that use torch, none of the fifteen the earlier reviews tuned
the rules on (benchmarks/lint_review.md, lint_review_untuned.md), are split at random, with a seed
drawn once from the OS (SystemRandom) and written into lint_heldout.toml, into a tuning half (rules
may be changed against its findings) and a held-out half (read once, at the end; that first reading is
the figure reported). This script recomputes the split from the recorded list and seed, so anyone can
check it was not chosen by hand:

    .venv/bin/python benchmarks/lint_heldout.py          # prints both halves; exit 1 if the record differs

Round 2 (lint_heldout_round2.toml) is the same method on 43 other libraries, drawn after round 1's
held-out half had been read (its entries are tables naming each library's source and version).
Rounds 3 to 22 (lint_heldout_round3.toml ... lint_heldout_round22.toml) are the same method again, each on
36 to 38 libraries and applications in no earlier round; from round 6 on, with their torch declaration
files (the linter reads them with --all-versions).
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import tomllib

RECORDS = tuple(
    Path(__file__).with_name(name)
    for name in (
        "lint_heldout.toml",
        "lint_heldout_round2.toml",
        "lint_heldout_round3.toml",
        "lint_heldout_round4.toml",
        "lint_heldout_round5.toml",
        "lint_heldout_round6.toml",
        "lint_heldout_round7.toml",
        "lint_heldout_round8.toml",
        "lint_heldout_round9.toml",
        "lint_heldout_round10.toml",
        "lint_heldout_round11.toml",
        "lint_heldout_round12.toml",
        "lint_heldout_round13.toml",
        "lint_heldout_round14.toml",
        "lint_heldout_round15.toml",
        "lint_heldout_round16.toml",
        "lint_heldout_round17.toml",
        "lint_heldout_round18.toml",
        "lint_heldout_round19.toml",
        "lint_heldout_round20.toml",
        "lint_heldout_round21.toml",
        "lint_heldout_round22.toml",
    )
)


def split(libraries: list[str], seed: int) -> tuple[list[str], list[str]]:
    """(tuning, held_out): the sorted list shuffled with ``seed``, first half tuning."""
    order = sorted(libraries)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return sorted(order[:half]), sorted(order[half:])


def names(entries: list) -> list[str]:
    """A half's library names: round 1 lists names, round 2 tables with a ``name``."""
    return [e["name"] if isinstance(e, dict) else e for e in entries]


def check(path: Path) -> bool:
    """Print the halves the record's seed gives; whether they are the recorded ones."""
    record = tomllib.loads(path.read_text(encoding="utf-8"))
    recorded = names(record["tuning"]["libraries"]), names(record["held_out"]["libraries"])
    tuning, held_out = split(recorded[0] + recorded[1], record["split"]["seed"])
    print(f"{path.name}\n  tuning:  ", " ".join(tuning), "\n  held out:", " ".join(held_out))
    if (tuning, held_out) != recorded:
        print(f"{path.name}: the recorded halves are not what seed {record['split']['seed']} gives", file=sys.stderr)
        return False
    return True


def main() -> int:
    return 0 if all([check(path) for path in RECORDS]) else 1


if __name__ == "__main__":
    sys.exit(main())
