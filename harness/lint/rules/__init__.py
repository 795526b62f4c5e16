"""The statically visible pitfalls of the corpus, as lint rules declared as data (as OpInfo
declares ops): each rule names the case(s) that prove it, says what goes wrong and the fix, and
fires only where its case's `affects` holds for the torch in question.

Every rule is tested by its cases (tests/lint/test_lint.py): the case's broken code must be flagged,
its fixed code must not. A rule matches a node with its context (harness/lint/engine.py).
The rules live in three modules: source_posts.py (PTF001-), upgrades.py (PTF101-) and catalogue.py
(PTF201-); base.py holds what they share.
"""

from torch_pitfalls.lint.rules.base import Rule
from torch_pitfalls.lint.rules.catalogue import CATALOGUE_RULES
from torch_pitfalls.lint.rules.source_posts import SOURCE_POST_RULES
from torch_pitfalls.lint.rules.upgrades import UPGRADE_RULES

RULES: tuple[Rule, ...] = SOURCE_POST_RULES + UPGRADE_RULES + CATALOGUE_RULES

__all__ = ["RULES", "Rule"]
