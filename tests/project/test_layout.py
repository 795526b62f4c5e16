"""The package layout (docs/architecture.md): imports run only downward, read from the source of
every module of ``harness`` and ``docs/site``, the imports inside functions included."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from planting import ROOT

# What each part may import besides itself. "case" is the case model at the top of harness/.
ALLOWED = {
    "case": {"case"},
    "run": {"case"},
    "matrix": {"case", "run"},
    "surface": {"case", "matrix"},  # the releases the matrix runs, as the default scan
    # the atomic write of a report (the recorded bench); the runner's standard for a fix (--fix's
    # proofs run a case's broken program, fixed by the linter, as its fix); the recorded matrix (--upgrade)
    "lint": {"case", "run", "matrix"},
    # the explainer reads the recorded fingerprints, and turns their masks' placeholders back into
    # wildcards with the masks' own table (run.fingerprint.MASKS)
    "watch": {"case", "matrix", "run.fingerprint"},
    "cli": {"case", "run", "matrix", "lint", "watch"},  # `pitfalls` gathers every capability's commands
    "site": {"case", "run", "matrix", "lint", "watch"},
}
ENTRY_POINTS = {"cli.py", "__main__.py"}


def part_of(path: Path) -> str:
    rel = path.relative_to(ROOT)
    if rel.parts[:2] == ("docs", "site"):
        return "site"
    inner = rel.parts[1:]
    if len(inner) == 1:
        return "cli" if inner[0] in ENTRY_POINTS else "case"
    return inner[0]


def imported(module: str) -> str | None:
    """The part a dotted module name belongs to, or None for anything outside the project."""
    parts = module.split(".")
    if parts[:2] == ["docs", "site"]:
        return "site"
    if parts[0] != "torch_pitfalls":
        return None
    if len(parts) == 1 or parts[1] not in {"run", "matrix", "surface", "lint", "watch"}:
        return "case"
    return parts[1]


def imports_of(path: Path, text: str) -> list[tuple[int, str]]:
    out = []
    for node in ast.walk(ast.parse(text, str(path))):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            # `from torch_pitfalls.run import state` imports the module torch_pitfalls.run.state
            out += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
    return out


def allowed(part: str, module: str) -> bool:
    target = imported(module)
    if target is None or target == part:
        return True
    return any(
        module == f"torch_pitfalls.{a}" or module.startswith(f"torch_pitfalls.{a}.") if "." in a else target == a
        for a in ALLOWED[part]
    )


def upward_imports(path: Path, text: str) -> list[str]:
    part = part_of(path)
    return [
        f"{path.relative_to(ROOT)}:{line}: {part} imports {module}"
        for line, module in imports_of(path, text)
        if not allowed(part, module)
    ]


def project_modules() -> list[Path]:
    return sorted([*(ROOT / "harness").rglob("*.py"), *(ROOT / "docs" / "site").glob("*.py")])


def test_imports_run_only_downward():
    files = project_modules()
    assert len(files) > 40  # the walk found the package, not an empty folder
    assert [bad for path in files for bad in upward_imports(path, path.read_text(encoding="utf-8"))] == []


@pytest.mark.parametrize(
    "where, line",
    [
        ("harness/case.py", "from torch_pitfalls.matrix import load_matrix"),  # the case model reaching up
        ("harness/run/report.py", "from torch_pitfalls.matrix.claims import all_claims"),  # run reading the matrix
        (
            "harness/lint/engine.py",
            "    from torch_pitfalls.watch.session import watch",
        ),  # lint reaching sideways, lazily
        ("harness/loader.py", "import docs.site.build"),  # anything below reading the site
    ],
)
def test_an_upward_import_is_named(where, line):
    """The check itself: each upward import, planted in the module's text, is reported."""
    path = ROOT / where
    body = f"def _planted():\n{line}\n" if line.startswith(" ") else f"{line}\n"
    assert upward_imports(path, path.read_text(encoding="utf-8")) == []
    (bad,) = upward_imports(path, path.read_text(encoding="utf-8") + "\n" + body)
    assert bad.startswith(f"{where}:") and line.split()[1] in bad


def test_every_package_of_the_harness_is_in_the_wheel():
    """A new subpackage missing from pyproject's list builds a wheel that fails on import (the rules
    package once did): every folder of harness/ with an __init__.py is listed, under the installed name."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {
        ".".join(("torch_pitfalls", *p.parent.relative_to(ROOT / "harness").parts))
        for p in (ROOT / "harness").rglob("__init__.py")
        if "__pycache__" not in p.parts
    }
    assert found - listed == set(), f"pyproject.toml [tool.setuptools] packages lacks {sorted(found - listed)}"


def test_no_two_test_folders_hold_a_module_of_the_same_name():
    """Test folders have no __init__.py: pytest imports each by its bare name, so two files (or a
    file and a package) with one name in two folders collide and one fails to collect (it happened
    twice: test_variants.py, variants)."""
    seen: dict[str, Path] = {}
    clashes = []
    for path in sorted((ROOT / "tests").rglob("*")):
        if "__pycache__" in path.parts or path.parent == ROOT / "tests" / "__pycache__":
            continue
        is_module = path.suffix == ".py" and path.name != "__init__.py" and not (path.parent / "__init__.py").exists()
        is_package = path.is_dir() and (path / "__init__.py").exists() and not (path.parent / "__init__.py").exists()
        if not (is_module or is_package) or path.name == "conftest.py":
            continue
        name = path.stem if is_module else path.name
        if name in seen:
            clashes.append(f"{seen[name].relative_to(ROOT)} and {path.relative_to(ROOT)}")
        seen.setdefault(name, path)
    assert clashes == [], "one module name in two test folders: " + "; ".join(clashes)
