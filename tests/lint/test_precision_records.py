"""The precision and recall figures docs/reference.md quotes are the recorded ones: each row of its table of
held-out rounds is what that round's verdicts (benchmarks/lint_review_round*/heldout_verdicts.csv) count,
every finding the round counted (heldout_counts.json) has its verdict, and the recall it leads with is the
newest fresh set's held-out report (reports/fresh*-heldout.json)."""

from __future__ import annotations

import collections
import csv
import json
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
ROW = re.compile(r"^\| (\d+) \| `(\w+)` \| (\d+) \| (\d+) \| (\d+) \| (\d+) \| ([\d.]+)% \| `([^`]+)` \|$", re.M)


def quoted_rows() -> list[tuple]:
    return ROW.findall((ROOT / "docs" / "reference.md").read_text(encoding="utf-8"))


def test_the_quoted_table_is_what_each_rounds_verdicts_count():
    rows = quoted_rows()
    assert len(rows) >= 5, "docs/reference.md lost its table of held-out rounds"
    for number, _frozen, findings, true, harmless, wrong, percent, review in rows:
        folder = ROOT / review
        with (folder / "heldout_verdicts.csv").open(encoding="utf-8", newline="") as f:
            verdicts = list(csv.DictReader(f))
        counted = collections.Counter(v["verdict"] for v in verdicts)
        assert set(counted) <= {"true", "harmless", "wrong"}, (number, set(counted))
        assert (len(verdicts), counted["true"], counted["harmless"], counted["wrong"]) == (
            int(findings),
            int(true),
            int(harmless),
            int(wrong),
        ), f"round {number}: the table says otherwise than {review}heldout_verdicts.csv"
        assert f"{100 * counted['true'] / len(verdicts):.1f}" == percent, number
        per_rule = json.loads((folder / "heldout_counts.json").read_text(encoding="utf-8"))
        assert per_rule == dict(collections.Counter(v["rule"] for v in verdicts)), number


def test_the_newest_round_is_quoted_first():
    rows = quoted_rows()
    rounds = [int(r[0]) for r in rows]
    assert rounds == sorted(rounds, reverse=True)
    read = ROOT.glob("benchmarks/lint_review_round*/heldout_verdicts.csv")  # a round whose held-out half was read
    newest = max(int(p.parent.name.removeprefix("lint_review_round")) for p in read)
    assert rounds[0] == newest, f"round {newest} is recorded but the table starts at round {rounds[0]}"


# "... (`reports/fresh7-heldout.json`): **8 of its 14 planted pitfalls found, nothing on its 4 correct scripts"
RECALL = re.compile(
    r"`reports/(fresh\d*)-heldout\.json`\):\s+\*\*(\d+) of its (\d+) planted pitfalls found,\s+nothing on\s+its\s+"
    r"(\d+) correct scripts?"
)


def test_the_quoted_recall_is_the_recorded_first_score_of_the_newest_fresh_set():
    """The recall docs/reference.md leads with is what the newest fresh set's held-out report counts."""
    quoted = RECALL.search((ROOT / "docs" / "reference.md").read_text(encoding="utf-8"))
    assert quoted, "docs/reference.md no longer quotes a fresh set's held-out recall"
    name, found, planted, correct = quoted.groups()
    newest = max(ROOT.glob("reports/fresh*-heldout.json"), key=lambda p: int(p.name[5:-13] or 1))
    assert f"{name}-heldout.json" == newest.name, f"{newest.name} is recorded but {name}'s score is quoted first"
    summary = json.loads((ROOT / "reports" / f"{name}-heldout.json").read_text(encoding="utf-8"))["lint"]["summary"]
    assert (int(found), int(planted), int(correct)) == (
        summary["found"],
        summary["planted"],
        summary["correct_scripts"],
    ), f"the quote says otherwise than reports/{name}-heldout.json"
    assert summary["findings_on_correct_scripts"] == 0  # "nothing on its correct scripts"
