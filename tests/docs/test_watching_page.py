"""The "Watching a run" page's sections drawn from records: on programs written outside the project
(reports/fresh-heldout.json), and side by side with other tools (a record of
benchmarks/watch_peers.py, planted here). Every figure comes from the record, none from prose."""

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


# --- "Side by side with other tools": rendered from a planted record of benchmarks/watch_peers.py --


def _peer_row(case, variant, tool, reported, on_target, verdict="", excerpt="", errors=()):
    return {
        "case": case,
        "variant": variant,
        "tool": tool,
        "reported": reported,
        "on_target": on_target,
        "verdict": verdict,
        "unjudged": False,
        "excerpt": excerpt,
        "report_lines": len(excerpt.splitlines()),
        "tool_errors": list(errors),
    }


PEERS = {
    "torch": "9.8.7",
    "cases": ["planted-a", "planted-b"],
    "tools": {
        "watch": {"name": "pitfalls watch", "version": "0.1.0", "applied": "proofs.watched(v)", "status": "ran"},
        "toolx": {"name": "ToolX", "version": "4.5.6", "applied": "toolx.check(model) | once", "status": "ran"},
        "tooly": {"name": "ToolY", "version": None, "status": "not run", "why_not": "import tooly failed: planted"},
    },
    "rows": [
        _peer_row("planted-a", "broken", "watch", True, True, "names the planted pitfall", "planted-a at a.py:3"),
        _peer_row("planted-a", "fixed", "watch", False, None),
        _peer_row("planted-a", "broken", "toolx", True, False, "a hint about speed", "X1 WARN: slow\nX2 WARN: slower"),
        _peer_row("planted-a", "fixed", "toolx", True, True, "claims the pitfall on the fix", "X3 FAIL: planted"),
        _peer_row("planted-b", "broken", "watch", True, True, "names the other pitfall", "planted-b at b.py:9"),
        _peer_row("planted-b", "fixed", "watch", False, None),
        _peer_row("planted-b", "broken", "toolx", False, None),
        _peer_row("planted-b", "fixed", "toolx", False, None, errors=["toolx crashed"]),
    ],
    "summary": {
        "watch": {"cases": 2, "broken_reported": 2, "broken_on_target": 2, "fixed_reported": 0},
        "toolx": {"cases": 2, "broken_reported": 1, "broken_on_target": 0, "fixed_reported": 1},
    },
    "overhead": {
        "workload": "a planted loop",
        "steps": 321,
        "rounds": 11,
        "traincheck_rounds": 4,
        "ratios": {"watch": 1.234, "toolx": 5.678},
        "wall_ratios": {"watch": 1.3, "toolx": 6.1},
        "errors": {"toolz": "ToolZError: planted"},
        "sides": {"watch": "with watch()", "toolx": "toolx.check() first"},
    },
}


def _peers_text(record) -> str:
    from docs.site.watching_page import _peers_section

    return "\n".join(_peers_section(record, {"planted-a"}))


def test_the_peers_section_is_the_records():
    text = _peers_text(PEERS)
    assert "## Side by side with other tools" in text and "on torch 9.8.7" in text
    assert "The broken and the fixed programs of 2 cases" in text
    assert "| pitfalls watch | 0.1.0 | proofs.watched(v) | 2 of 2 | 2 | 0 of 2 |" in text
    assert "| ToolX | 4.5.6 | toolx.check(model) \\| once | 1 of 2 | 0 | 1 of 2 |" in text  # a pipe kept in its cell
    assert "| ToolY |  | not run: import tooly failed: planted |" in text
    # per case: the broken program, then the fixed one; a case this build has no page for is code
    assert "| [planted-a](cases/planted-a.ipynb) | found / quiet | other / false alarm |" in text
    assert "| `planted-b` | found / quiet | nothing / failed |" in text
    # every report is counted (a tool's failure too; a silent run is not) and left to the record
    assert "Every report (5 in all)" in text and "X1 WARN" not in text
    # the overhead, from the record alone
    assert "321 steps" in text and "11 rounds in one interpreter, and 4 for TrainCheck" in text
    assert "| with watch() | 1.234 | 1.3 |" in text and "| toolx.check() first | 5.678 | 6.1 |" in text
    assert "| toolz | could not run: ToolZError: planted | |" in text


def test_a_changed_peers_record_changes_the_section():
    changed = copy.deepcopy(PEERS)
    changed["torch"] = "1.2.3"
    changed["rows"][0].update(reported=False, on_target=None, verdict="", excerpt="", report_lines=0)
    changed["summary"]["watch"].update(broken_reported=1, broken_on_target=1)
    changed["overhead"]["ratios"]["watch"] = 9.876
    del changed["overhead"]["traincheck_rounds"]
    before, after = _peers_text(PEERS), _peers_text(changed)
    assert "on torch 1.2.3" in after and "on torch 9.8.7" not in after
    assert "| [planted-a](cases/planted-a.ipynb) | nothing / quiet |" in after
    assert "| pitfalls watch | 0.1.0 | proofs.watched(v) | 1 of 2 | 1 | 0 of 2 |" in after
    assert "Every report (5 in all)" in before and "Every report (4 in all)" in after
    assert "| with watch() | 9.876 |" in after and "for TrainCheck" not in after
    changed["overhead"] = None  # not measured: no cost table
    assert "What each costs" in after and "What each costs" not in _peers_text(changed)


def test_the_watching_page_has_the_section_only_with_a_record():
    from docs.site.watching_page import Detection, watching_page

    det = Detection(lint={}, watch={}, explained=frozenset(), proofs={}, false_positives=None, peers=PEERS)
    assert "## Side by side with other tools" in watching_page(det, ["planted-a"])
    without = Detection(lint={}, watch={}, explained=frozenset(), proofs={}, false_positives=None)
    assert "Side by side" not in watching_page(without, ["planted-a"])
