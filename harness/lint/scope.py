"""Which rules each file gets, and for which torch: the releases asked for (``--torch``, the installed
one), or with ``--all-versions`` the releases its package declares (declared.py; every release when
it declares nothing, or with ``--ignore-declared``); and, in test code, no rule whose harm is a cost.

Test code is what pytest collects by default (``test_*.py``, ``*_test.py``), ``conftest.py``, any
file under a ``tests``/``test`` folder (below the project's root where one is found, so that a
checkout inside a folder named ``test`` is not all test code), and the test-support modules that
the usual names mark (``testing``/``test_utils`` folders, ``testing_utils.py``/``test_utils.py``:
``numpy.testing``, ``torch.testing``, ``transformers.testing_utils``, ``accelerate.test_utils``). Some rules'
harm is a cost (rules/base.py COST_HARMS): time (a tensor made on the CPU and copied once in a test
costs microseconds) or memory (a graph recorded for one small evaluation batch). Neither changes
anything a test checks, so they are noise there, where ruff users silence such rules with
per-file-ignores. Correctness rules stay on in tests (a wrong result in a test is a wrong result).
``--costs-in-tests`` turns the others back on.
"""

from __future__ import annotations

from pathlib import Path

from torch_pitfalls.lint import Rule, active_rules
from torch_pitfalls.lint.declared import Declared, declared_for
from torch_pitfalls.lint.releases import Releases
from torch_pitfalls.lint.rules.base import COST_HARMS
from torch_pitfalls.lint.testcode import is_test_file


class FileRules:
    """The rules and releases for each file: ``releases`` fixed (``--torch``, installed), or None to
    read each package's declaration (``--all-versions``)."""

    def __init__(self, releases: Releases | None, select=(), ignore=(), costs_in_tests: bool = False):
        self.releases, self.select, self.ignore, self.costs_in_tests = releases, select, ignore, costs_in_tests
        self.declarations: dict[Path, Declared] = {}  # the ones met, by root, for the report's header
        self._rules: dict[tuple, list[Rule]] = {}
        self._by_folder: dict[Path, Declared | None] = {}
        self._by_path: dict[str, tuple[list[Rule], Releases]] = {}

    def for_all(self, paths) -> None:
        """Read every file's declaration now (a bad one is an error before any output)."""
        for path in paths:
            self.for_path(path)

    def _declared(self, path: Path) -> Declared | None:
        folder = Path(path).parent
        if folder not in self._by_folder:
            self._by_folder[folder] = declared_for(path)
        found = self._by_folder[folder]
        if found is not None and found.root == folder.resolve():  # a module beside dist-infos: each its own
            return declared_for(path)
        return found

    def for_path(self, path: Path) -> tuple[list[Rule], Releases]:
        key = str(path)  # asked twice per file: when the run reads every declaration first, and at its lint
        if key not in self._by_path:
            self._by_path[key] = self._for_path(path)
        return self._by_path[key]

    def _for_path(self, path: Path) -> tuple[list[Rule], Releases]:
        declared = self._declared(path) if self.releases is None else None
        if declared is not None:
            self.declarations.setdefault(declared.root, declared)
        releases = self.releases or (declared.releases if declared else Releases.every())
        in_tests = not self.costs_in_tests and is_test_file(path, declared.root if declared else None)
        key = (releases, in_tests)
        if key not in self._rules:
            rules = active_rules(releases, self.select, self.ignore)
            self._rules[key] = [r for r in rules if not (in_tests and r.harm in COST_HARMS)]
        return self._rules[key], releases

    def every_rule(self) -> list[Rule]:
        """The rules any file got (for the header), in rule order."""
        seen = {r.id: r for rules in self._rules.values() for r in rules}
        return [seen[k] for k in sorted(seen)]
