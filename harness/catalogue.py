"""The corpus's index, ``cases/catalogue.csv``: one row per case, generated from the cases' own
facts (their ``CASE``), never written by hand. It marks a folder as a corpus (the loader's
``CORPUS_MARKER``) and is a table anyone can read on a code host.

``python -m torch_pitfalls.catalogue`` prints it; ``--write`` writes it beside the cases.
"""

from __future__ import annotations

import argparse
import csv
import io
import sys
from pathlib import Path

from torch_pitfalls.loader import CORPUS_MARKER, default_cases_dir, load_cases

COLUMNS = ("id", "topic", "kind", "devices", "symptom_category", "sources", "star")


def catalogue_text(cases_dir: Path) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(COLUMNS)
    for lc in load_cases(cases_dir):
        c = lc.case
        writer.writerow(
            [
                c.id,
                lc.topic,
                c.kind,
                " ".join(c.devices) + (" (device-independent)" if c.device_independent else ""),
                c.symptom_category,
                "; ".join(dict.fromkeys(s.title for s in c.sources)),
                "yes" if c.star else "",
            ]
        )
    return out.getvalue()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m torch_pitfalls.catalogue", description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--cases", type=Path, default=None, help="the cases folder (default: ./cases or the installed corpus)"
    )
    parser.add_argument("--write", action="store_true", help=f"write it to <cases>/{CORPUS_MARKER}")
    args = parser.parse_args(argv)
    cases_dir = args.cases or default_cases_dir()
    text = catalogue_text(cases_dir)
    if args.write:
        (cases_dir / CORPUS_MARKER).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
