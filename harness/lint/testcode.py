"""Which files are test code: what pytest collects by default (``test_*.py``, ``*_test.py``),
``conftest.py``, any file under a ``tests``/``test`` folder (below the project's root where one is
found), and the test-support modules the usual names mark (scope.py reads it for the rules whose harm
is a cost; a few rules stay quiet there where their premise fails: a toy model built to exercise
something else). Apart from scope.py, which imports the rules, so that a rule can import it."""

from __future__ import annotations

from pathlib import Path

TEST_FOLDERS = ("tests", "test", "testing", "test_utils")
TEST_SUPPORT_MODULES = ("testing_utils.py", "test_utils.py", "testing.py")


def is_test_file(path: Path, root: Path | None = None) -> bool:
    path = Path(path)
    name = path.name
    if (
        name in ("conftest.py", *TEST_SUPPORT_MODULES)
        or (name.startswith("test_") and name.endswith(".py"))
        or name.endswith("_test.py")
    ):
        return True
    folders = path.parent.parts
    if root is not None:
        try:
            folders = path.resolve().parent.relative_to(root).parts
        except ValueError:
            pass
    return any(part in TEST_FOLDERS for part in folders)


def in_test_code(path: str | None) -> bool:
    """The file a rule is reading (``ctx.path``, None for a text without a file) is test code."""
    return path is not None and is_test_file(Path(path))
