"""Variant sets for the lint rules, one module per rule (``ptf005.py`` for PTF005): each defines

* ``PITFALL``: name -> a small program with the rule's pitfall, spelled the ways people write it
  (bound names, aliases, inside loops and methods, keyword or positional arguments, chains);
* ``NEAR_MISS``: name -> a correct program that looks alike (the rule must stay quiet);
* ``PREVIEW`` (optional): name -> the pitfall on an object whose type the file does not show, which
  the rule reports only with ``--preview``;
* ``SEEN``: spelling name -> where such code appears in public code or issues.

tests/lint/test_lint_variants.py holds every rule to its set; benchmarks/lint_variants.py reports recall
and precision per rule.
"""

import importlib.util
from pathlib import Path
from types import ModuleType

HERE = Path(__file__).resolve().parent


def load(rule_id: str) -> ModuleType | None:
    """The variant module of a rule (``ptf005.py`` for PTF005), or None when it has none."""
    path = HERE / f"{rule_id.lower()}.py"
    if not path.exists():
        return None
    spec = importlib.util.spec_from_file_location(f"lint_variants_{rule_id.lower()}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
