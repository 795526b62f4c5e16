"""Every lint rule against its variant set (tests/lint/lint_variants/): the pitfall spelled the ways
people write it must be found (recall >= 80% per rule), and the correct programs that look alike
must have no finding at all, from any rule. Rules run as with ``--all-versions``.

A variant set's ``PREVIEW`` spellings put the pattern on an object whose type the file does not show
(``def f(w): w.qr()``): another library's object may have the method too, so the rule reports them
only with ``--preview`` (rules/base.py UNSURE), and each must be found so and only so. A set with
``GUARDS_AT_PREVIEW`` holds its near misses at ``--preview`` too (its rule reports a model class the file
does not build only there, so a class-only near miss tests its guards only at that level). A rule that reports
only with ``--preview`` (Rule.preview_only: PTF020) is held to its whole set there, and must be quiet
without it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from lint_variants import load  # noqa: E402

from torch_pitfalls.lint import RULES, RULES_BY_ID, active_rules, lint_text  # noqa: E402

MIN_RECALL = 0.8
MIN_PITFALLS, MIN_NEAR_MISSES = 5, 3
EVERY_RULE = active_rules(None)


def rule_ids():
    return [r.id for r in RULES]


@pytest.mark.parametrize("rule", rule_ids())
def test_rule_finds_its_pitfalls_and_nothing_in_near_misses(rule):
    variants = load(rule)
    assert variants is not None, f"{rule} has no variant set: write tests/lint/lint_variants/{rule.lower()}.py"
    assert len(variants.PITFALL) >= MIN_PITFALLS and len(variants.NEAR_MISS) >= MIN_NEAR_MISSES
    assert variants.SEEN and set(variants.SEEN) <= {
        *variants.PITFALL,
        *variants.NEAR_MISS,
        *getattr(variants, "PREVIEW", {}),
    }
    preview_only = bool(RULES_BY_ID[rule].preview_only)
    missed = [
        name
        for name, text in variants.PITFALL.items()
        if rule not in {f.rule for f in lint_text(text, f"{name}.py", EVERY_RULE, preview=preview_only)}
    ]
    if preview_only:  # reported with --preview only, labelled so: quiet by default on its own pitfalls
        assert not [
            n for n, t in variants.PITFALL.items() if rule in {f.rule for f in lint_text(t, "v.py", EVERY_RULE)}
        ]
    recall = 1 - len(missed) / len(variants.PITFALL)
    assert recall >= MIN_RECALL, f"{rule}: recall {recall:.0%}, missed {missed}"
    noisy = {
        name: [f.as_text() for f in lint_text(text, f"{name}.py", EVERY_RULE)]
        for name, text in variants.NEAR_MISS.items()
    }
    assert {k: v for k, v in noisy.items() if v} == {}
    if preview_only or getattr(variants, "GUARDS_AT_PREVIEW", False):  # a dropped guard shows at --preview
        loud = {
            name: [f.as_text() for f in lint_text(text, f"{name}.py", EVERY_RULE, preview=True) if f.rule == rule]
            for name, text in variants.NEAR_MISS.items()
        }
        assert {k: v for k, v in loud.items() if v} == {}


@pytest.mark.parametrize("rule", [r for r in rule_ids() if getattr(load(r), "PREVIEW", None)])
def test_preview_spellings_are_reported_only_with_preview(rule):
    for name, text in load(rule).PREVIEW.items():
        quiet = [f for f in lint_text(text, f"{name}.py", EVERY_RULE) if f.rule == rule]
        labelled = [f for f in lint_text(text, f"{name}.py", EVERY_RULE, preview=True) if f.rule == rule]
        assert quiet == [], f"{rule} {name}: reported without --preview"
        assert labelled and all(f.preview for f in labelled), f"{rule} {name}: not reported with --preview"


ANNOTATED = """
import torch
from torch.autograd import Variable
def f(x: torch.FloatTensor, v: Variable, n: torch.cuda.amp.autocast = None) -> torch.LongTensor:
    y: torch.FloatTensor = x
    return y
"""


def test_annotations_are_not_code():
    """A type annotation names a type; it builds nothing and calls nothing (engine.py does not offer it
    to the rules): a deprecated or legacy name there is not a finding."""
    assert [f.as_text() for f in lint_text(ANNOTATED, "annotated.py", EVERY_RULE)] == []
