"""The "Watching a run" page's section on programs written outside the project: every figure comes
from the scored record (reports/fresh-heldout.json), none from prose."""

from __future__ import annotations

import copy
import json
import re

from planting import ROOT

from docs.site.watching_page import _fresh_section

RECORD = json.loads((ROOT / "reports" / "fresh-heldout.json").read_text(encoding="utf-8"))["watch"]


def _text(record) -> str:
    return "\n".join(_fresh_section(record, set()))


def test_the_figures_are_the_records():
    s = RECORD["summary"]["sound"]
    text = _text(RECORD)
    assert f"as the key names them: {s['reported']} of {s['pairs']}" in text
    assert f"reports on the correct twins: {s['false_alarms_on_fixed']}" in text
    assert len(re.findall(r"\n\| p\d\d \|", text)) == len(RECORD["pairs"])


def test_a_changed_record_changes_the_page():
    changed = copy.deepcopy(RECORD)
    changed["summary"]["sound"]["false_alarms_on_fixed"] = 4
    changed["pairs"][0]["sound"]["broken_findings"] = []
    changed["pairs"][0]["sound"]["false_alarms_on_fixed"] = ["x@1"]
    text = _text(changed)
    assert "reports on the correct twins: 4" in text and "x@1" in text
    before = sum(1 for p in RECORD["pairs"] if p["sound"]["broken_findings"])
    after = sum(1 for p in changed["pairs"] if p["sound"]["broken_findings"])
    assert f"with a report anywhere in the program: {after}" in text and (before != after or after == 0)
