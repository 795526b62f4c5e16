"""The engine offers a call only to the rules whose ``calls`` name it (rules/base.py, engine.Walker):
a rule's list must hold every name a call it matches can end with. The programs those rules are held
to (their variant sets, with their previews and near misses, and the broken and fixed code of their
cases) give the same findings with the dispatch as when each call is offered to every call rule."""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lint_variants import load  # noqa: E402
from planting import ROOT  # noqa: E402

from torch_pitfalls.casefile import read_case  # noqa: E402
from torch_pitfalls.lint import active_rules, engine, lint_text  # noqa: E402
from torch_pitfalls.lint.rules import module_of  # noqa: E402
from torch_pitfalls.loader import case_id_of, find_case_files  # noqa: E402

EVERY_RULE = active_rules(None)
DISPATCHED = [r for r in EVERY_RULE if r.calls]  # the dispatch changes what only these are offered


def _programs():
    # the dispatch can only take findings away: where a rule with calls= finds something is in its own
    # spellings and cases (everyone's near misses must stay quiet anyway, tests/lint/test_lint_variants.py)
    for rule in DISPATCHED:
        variants = load(rule.id)
        for group in ("PITFALL", "NEAR_MISS", "PREVIEW"):
            for name, source in getattr(variants, group, {}).items():
                yield f"{rule.id}.{group}.{name}", source
    own_cases = {case for rule in DISPATCHED for case in rule.cases}  # the cases those rules are proven by
    for path in find_case_files(ROOT / "cases"):
        if case_id_of(path) in own_cases:
            case = read_case(path)
            for variant in ("broken", "fixed"):
                yield from case.variant_programs(variant)


def _findings(monkeypatch, by_call_name: bool) -> dict:
    monkeypatch.setattr(engine, "BY_CALL_NAME", by_call_name)
    return {
        label: [(f.line, f.col, f.rule, f.preview) for f in lint_text(source, label, DISPATCHED, preview=True)]
        for label, source in _programs()
    }


def test_the_dispatch_by_call_name_changes_no_finding(monkeypatch):
    dispatched = _findings(monkeypatch, True)
    assert len(DISPATCHED) > 30 and sum(map(len, dispatched.values())) > 100  # findings to compare
    assert dispatched == _findings(monkeypatch, False)


def test_a_rule_whose_calls_leave_out_a_name_it_matches_loses_findings(monkeypatch):
    """The comparison above can fail: PTF011 told it matches only ``zero_grad`` calls finds nothing."""
    rule = module_of("PTF011").RULE
    wrong = dataclasses.replace(rule, calls=("zero_grad",))
    broken = read_case(next(p for p in find_case_files(ROOT / "cases") if p.stem == "missing_zero_grad"))
    (label, source), *_ = broken.variant_programs("broken")
    assert lint_text(source, label, [rule]) and not lint_text(source, label, [wrong])
    monkeypatch.setattr(engine, "BY_CALL_NAME", False)
    assert lint_text(source, label, [wrong])
