"""Sample a round's held-out findings for reading: every finding of a rule with at most 25, else 25
drawn with random.Random(f"38-{round}:{rule}") from the rule's findings sorted by (path, line, col).

    .venv/bin/python benchmarks/lint_review_sample.py round3 DIR OUT.json

DIR holds the `pitfalls lint --format json` outputs (*.json) of the held-out half; OUT gets the counts
per rule and the sample (used for round 2, benchmarks/lint_review_round2/, and round 3)."""

import collections
import glob
import json
import random
import sys


def main(round_name: str, src: str, out: str) -> None:
    findings = []
    for f in sorted(glob.glob(f"{src}/*.json")):
        findings += json.load(open(f))["findings"]
    by = collections.defaultdict(list)
    for f in findings:
        by[f["rule"]].append(f)
    sample = {}
    for rule, fs in sorted(by.items()):
        fs = sorted(fs, key=lambda f: (f["path"], f["line"], f["col"]))
        sample[rule] = fs if len(fs) <= 25 else random.Random(f"38-{round_name}:{rule}").sample(fs, 25)
    json.dump({"counts": {r: len(v) for r, v in by.items()}, "sample": sample}, open(out, "w"), indent=1)
    print(
        {r: len(v) for r, v in sorted(by.items())},
        sum(len(v) for v in by.values()),
        "findings;",
        sum(len(v) for v in sample.values()),
        "to read",
    )


if __name__ == "__main__":
    main(*sys.argv[1:4])
