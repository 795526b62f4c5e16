"""The statically visible pitfalls of the corpus, as lint rules declared as data (as OpInfo
declares ops): each rule names the case(s) that prove it, says what goes wrong and the fix, and
fires only where its case's `affects` holds for the torch in question.

Every rule is one module of this package, named by its id and its first case
(``ptf010_load_state_dict_strict_false.py`` for PTF010, case ``load-state-dict-strict-false``):
its what / why / fix text (the module's docstring), the checks only it uses, its ``RULE`` record
(base.py: the message, the node types it looks at, per-rule behaviour as fields) and its
``--fix``, if it has one. What several rules use sits in base.py (the record, the small
matchers) and shared/ (by subject). This module is the one registry: it finds the rule modules,
collects each ``RULE`` and checks that the ids are unique and each module is named after its rule.

Every rule is tested by its cases (tests/lint/test_lint.py): the case's broken code must be flagged,
its fixed code must not. A rule matches a node with its context (harness/lint/engine.py).
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from types import ModuleType

from torch_pitfalls.lint.rules.base import Rule

# a rule module's name: ptf + the id's digits + "_" + its first case, dashes as underscores
RULE_MODULE = re.compile(r"ptf[0-9]+_\w+")


class RegistryError(Exception):
    """A rule module that does not say what the registry needs: one ``RULE``, named after it."""


def module_name(rule: Rule) -> str:
    """The name the module of ``rule`` must have."""
    return f"{rule.id.lower()}_{rule.case.replace('-', '_')}"


def discover(path=__path__, package: str = __name__) -> dict[str, ModuleType]:
    """The rule modules of a package (this one), by rule id, each checked."""
    found: dict[str, ModuleType] = {}
    for info in sorted(pkgutil.iter_modules(path), key=lambda i: i.name):
        if info.ispkg or not RULE_MODULE.fullmatch(info.name):
            continue
        module = importlib.import_module(f"{package}.{info.name}")
        rule = getattr(module, "RULE", None)
        if not isinstance(rule, Rule):
            raise RegistryError(f"{module.__file__}: a rule module holds its rule as RULE = Rule(...)")
        if info.name != module_name(rule):
            raise RegistryError(
                f"{module.__file__}: the module of {rule.id} (first case {rule.case}) is named "
                f"{module_name(rule)}.py, not {info.name}.py"
            )
        if rule.deliberate_warning and not rule.upgrade:
            raise RegistryError(f"{module.__file__}: deliberate_warning is for an upgrade rule (upgrade=True)")
        if rule.id in found:
            raise RegistryError(f"two rules with the id {rule.id}: {found[rule.id].__file__} and {module.__file__}")
        found[rule.id] = module
    return found


_MODULES = discover()
RULES: tuple[Rule, ...] = tuple(_MODULES[i].RULE for i in sorted(_MODULES))
# every fix by its rule's id (fixes.py applies them; tests swap one here)
FIXES = {rule.id: rule.fix for rule in RULES if rule.fix is not None}


def module_of(rule_id_or_case: str) -> ModuleType:
    """The module of a rule, from its id (``PTF010``) or one of its cases (``load-state-dict-strict-false``)."""
    key = rule_id_or_case.upper()
    if key in _MODULES:
        return _MODULES[key]
    for module in _MODULES.values():
        if rule_id_or_case in module.RULE.cases:
            return module
    raise LookupError(f"no rule {rule_id_or_case!r}: neither a rule id nor a case of one")


__all__ = ["FIXES", "RULES", "RegistryError", "Rule", "discover", "module_name", "module_of"]
