"""Sample the held-out findings for reading: every finding of a rule with at most 25, else 25 drawn
with random.Random(f"38-round3:{rule}") from the findings sorted by (path, line, col)."""

import collections
import glob
import json
import random
import sys

src = sys.argv[1]
out = sys.argv[2]
findings = []
for f in sorted(glob.glob(f"{src}/*.json")):
    findings += json.load(open(f))["findings"]
by = collections.defaultdict(list)
for f in findings:
    by[f["rule"]].append(f)
sample = {}
for rule, fs in sorted(by.items()):
    fs = sorted(fs, key=lambda f: (f["path"], f["line"], f["col"]))
    sample[rule] = fs if len(fs) <= 25 else random.Random(f"38-round3:{rule}").sample(fs, 25)
json.dump({"counts": {r: len(v) for r, v in by.items()}, "sample": sample}, open(out, "w"), indent=1)
print(
    {r: len(v) for r, v in sorted(by.items())},
    sum(len(v) for v in by.values()),
    "findings;",
    sum(len(v) for v in sample.values()),
    "to read",
)
