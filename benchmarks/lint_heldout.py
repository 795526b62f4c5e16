"""The split of the linter's precision measurement, fixed before any finding is read (issue 38).

36 public libraries and applications that use torch, none of the fifteen the earlier reviews tuned
the rules on (benchmarks/lint_review.md, lint_review_untuned.md), are split at random, with a seed
drawn once from the OS (SystemRandom) and written into lint_heldout.toml, into a tuning half (rules
may be changed against its findings) and a held-out half (read once, at the end; that first reading is
the figure reported). This script recomputes the split from the recorded list and seed, so anyone can
check it was not chosen by hand:

    .venv/bin/python benchmarks/lint_heldout.py          # prints both halves; exit 1 if the record differs
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import tomllib

RECORD = Path(__file__).with_name("lint_heldout.toml")


def split(libraries: list[str], seed: int) -> tuple[list[str], list[str]]:
    """(tuning, held_out): the sorted list shuffled with ``seed``, first half tuning."""
    order = sorted(libraries)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return sorted(order[:half]), sorted(order[half:])


def main() -> int:
    record = tomllib.loads(RECORD.read_text(encoding="utf-8"))
    everything = record["tuning"]["libraries"] + record["held_out"]["libraries"]
    tuning, held_out = split(everything, record["split"]["seed"])
    print("tuning:  ", " ".join(tuning))
    print("held out:", " ".join(held_out))
    if (tuning, held_out) != (record["tuning"]["libraries"], record["held_out"]["libraries"]):
        print(f"{RECORD.name}: the recorded halves are not what seed {record['split']['seed']} gives", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
