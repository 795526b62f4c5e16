"""Recompute the tuning / held-out halves of benchmarks/fresh from the names and the seed in split.toml
(and of the second to thirteenth lint sets, lint2/ ... lint13/, from their own split.toml:
each has its own seed, drawn when the set was written).

Method: sort the lint script names (and, separately, the watch pair ids), shuffle each sorted list with
its own random.Random(seed), and take the first half as the tuning half. Exits 1 if split.toml's halves,
or the names it lists, differ from what the files on disk and the seed give.
"""

import random
import sys
from pathlib import Path

import tomllib

HERE = Path(__file__).resolve().parent


def halves(names, seed):
    order = sorted(names)
    random.Random(seed).shuffle(order)
    half = len(order) // 2
    return order[:half], order[half:]


def main():
    first = tomllib.loads((HERE / "split.toml").read_text())
    second = tomllib.loads((HERE / "lint2" / "split.toml").read_text())
    third = tomllib.loads((HERE / "lint3" / "split.toml").read_text())
    fourth = tomllib.loads((HERE / "lint4" / "split.toml").read_text())
    fifth = tomllib.loads((HERE / "lint5" / "split.toml").read_text())
    on_disk = {
        "lint": (first, "lint", sorted(p.name for p in (HERE / "lint").glob("s[0-9][0-9]_*.py"))),
        "watch": (first, "watch", sorted({p.name[:3] for p in (HERE / "watch").glob("p[0-9][0-9]_*.py")})),
        "lint2": (second, "lint", sorted(p.name for p in (HERE / "lint2").glob("t[0-9][0-9]_*.py"))),
        "lint3": (third, "lint", sorted(p.name for p in (HERE / "lint3").glob("u[0-9][0-9]_*.py"))),
        "lint4": (fourth, "lint", sorted(p.name for p in (HERE / "lint4").glob("v[0-9][0-9]_*.py"))),
        "lint5": (fifth, "lint", sorted(p.name for p in (HERE / "lint5").glob("w[0-9][0-9]_*.py"))),
    }
    for folder, prefix in (
        ("lint6", "x"),
        ("lint7", "y"),
        ("lint8", "z"),
        ("lint9", "q"),
        ("lint10", "r"),
        ("lint11", "s"),
        ("lint12", "k"),
        ("lint13", "m"),
        ("lint14", "n"),
        ("lint15", "j"),
        ("lint16", "h"),
        ("lint17", "g"),
        ("lint18", "h"),
        ("lint19", "e"),
        ("lint20", "f"),
    ):  # a set is checked once its split is recorded
        if (HERE / folder / "split.toml").exists():
            record = tomllib.loads((HERE / folder / "split.toml").read_text())
            on_disk[folder] = (record, "lint", sorted(p.name for p in (HERE / folder).glob(f"{prefix}[0-9][0-9]_*.py")))
    ok = True
    for kind, (record, section, names) in on_disk.items():
        seed = record["seed"]
        rec = record[section]
        if sorted(rec["names"]) != names:
            print(f"{kind}: recorded names differ from the files on disk")
            ok = False
        tuning, held_out = halves(rec["names"], seed)
        if tuning != rec["tuning"] or held_out != rec["held_out"]:
            print(f"{kind}: recorded halves differ from the recomputed ones")
            print(f"  recomputed tuning:   {tuning}")
            print(f"  recomputed held_out: {held_out}")
            ok = False
        else:
            print(f"{kind}: {len(tuning)} tuning, {len(held_out)} held out: matches the record")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
