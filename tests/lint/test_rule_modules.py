"""One module per rule (harness/lint/rules/): each named by its id and first case, holding its what /
why / fix text, its check, its record and its fix; one registry that finds them and refuses a module
named otherwise or a second rule with one id; per-rule behaviour read from the record by the walk."""

from __future__ import annotations

import ast
import dataclasses
import sys
import textwrap

import pytest

from torch_pitfalls.lint import RULES, lint_text
from torch_pitfalls.lint.engine import walk
from torch_pitfalls.lint.rules import FIXES, RegistryError, discover, module_name, module_of


@pytest.mark.parametrize("rule", RULES, ids=[r.id for r in RULES])
def test_a_rule_is_one_module_found_from_its_id_or_any_of_its_cases(rule):
    module = module_of(rule.id)
    assert module.RULE is rule and module.__name__.rsplit(".", 1)[1] == module_name(rule)
    assert all(rule in (module_of(case).RULE, *(r for r in RULES if case in r.cases)) for case in rule.cases)
    lines = module.__doc__.strip().splitlines()
    assert 2 <= len(lines) <= 6, (rule.id, lines)  # what / why / fix, short
    assert [w for w in ("What:", "Why:", "Fix:") if not any(line.startswith(w) for line in lines)] == [], rule.id
    if rule.fix is not None:  # its fix: a function of its module, or built there from one several fixes share
        assert rule.fix.edits.__module__ in (module.__name__, "torch_pitfalls.lint.fixes"), rule.id
        assert FIXES[rule.id] is rule.fix


def test_an_unknown_rule_or_case_is_a_lookup_error():
    with pytest.raises(LookupError, match="no rule 'PTF999'"):
        module_of("PTF999")


def _package(tmp_path, monkeypatch, name: str, modules: dict[str, str]):
    root = tmp_path / name
    root.mkdir()
    (root / "__init__.py").write_text("")
    for module, (rule_id, case) in modules.items():
        (root / f"{module}.py").write_text(
            "from torch_pitfalls.lint.rules.base import Rule\n"
            f"RULE = Rule({rule_id!r}, ({case!r},), 'what goes wrong', None, nodes=())\n"
        )
    monkeypatch.syspath_prepend(str(tmp_path))
    return [str(root)], name


def test_the_registry_refuses_a_module_named_otherwise_and_two_rules_with_one_id(tmp_path, monkeypatch):
    found = discover(*_package(tmp_path, monkeypatch, "good_rules", {"ptf901_some_case": ("PTF901", "some-case")}))
    assert list(found) == ["PTF901"]
    misnamed = _package(tmp_path, monkeypatch, "misnamed_rules", {"ptf902_old_name": ("PTF902", "new-name")})
    with pytest.raises(RegistryError, match="named ptf902_new_name.py, not ptf902_old_name.py"):
        discover(*misnamed)
    twice = {"ptf903_one_case": ("PTF903", "one-case"), "ptf903_other_case": ("PTF903", "other-case")}
    with pytest.raises(RegistryError, match="two rules with the id PTF903"):
        discover(*_package(tmp_path, monkeypatch, "twice_rules", twice))
    for name in [m for m in sys.modules if m.split(".")[0] in ("good_rules", "misnamed_rules", "twice_rules")]:
        monkeypatch.delitem(sys.modules, name)


def test_the_upgrade_rules_are_the_upgrade_cases_and_only_they_read_deliberate_warnings():
    assert {r.id for r in RULES if r.upgrade} == {r.id for r in RULES if r.id.startswith("PTF1")}
    assert all(r.upgrade for r in RULES if r.deliberate_warning or r.once_per_file)


STORAGE = textwrap.dedent("""\
    import torch

    def size_of(buffer):
        return buffer.storage().size()

    a = torch.zeros(2).storage()
    b = torch.ones(2).storage()
""")


def test_a_once_per_file_rule_keeps_its_one_finding_per_walk_and_an_unsure_one_does_not_take_it():
    """PTF106 (a deprecated name: once per file): ``buffer.storage()`` on an unknown object is UNSURE,
    reported only with --preview, and leaves the file's one finding to the first sure one, line 6.
    The state is the walk's: walking the same tree again finds the same."""
    rule = module_of("PTF106").RULE
    assert [(f.line, f.preview) for f in lint_text(STORAGE, "m.py", [rule])] == [(6, False)]
    assert [(f.line, f.preview) for f in lint_text(STORAGE, "m.py", [rule], preview=True)] == [(4, True), (6, False)]
    tree = ast.parse(STORAGE)
    first, again = walk(tree, [rule]), walk(tree, [rule])
    assert [(h.line, h.sure) for h in first] == [(h.line, h.sure) for h in again] == [(6, True)]


def _texts_of(rule):
    """Every program the rule is held to: its variant set's pitfalls, near misses and preview spellings,
    and its cases' broken and fixed programs."""
    from lint_variants import load
    from test_lint import programs

    variants = load(rule.id)
    texts = [
        *variants.PITFALL.values(),
        *variants.NEAR_MISS.values(),
        *getattr(variants, "PREVIEW", {}).values(),
    ]
    texts += [text for case in rule.cases for variant in ("broken", "fixed") for _, text in programs(case, variant)]
    return texts


@pytest.mark.parametrize("rule", [r for r in RULES if r.needs], ids=lambda r: r.id)
def test_a_rule_skipped_for_lack_of_its_words_could_not_have_matched(rule):
    """A rule with ``needs`` is not run on a file without one of its words (a speed-up): wherever the
    rule matches when run regardless, sure or preview, one of its words is in the text."""
    regardless = dataclasses.replace(rule, needs=())
    for text in _texts_of(rule):
        if lint_text(text, "m.py", [regardless], preview=True):
            assert any(word in text for word in rule.needs), (rule.id, text[:200])


def test_a_word_list_that_misses_a_spelling_is_caught():
    rule = dataclasses.replace(module_of("PTF025").RULE, needs=("NoSuchWord",))
    with pytest.raises(AssertionError):
        test_a_rule_skipped_for_lack_of_its_words_could_not_have_matched(rule)
