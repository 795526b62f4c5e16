"""cases/catalogue.csv is the cases' own facts, generated (python -m torch_pitfalls.catalogue --write)."""

from pathlib import Path

from torch_pitfalls.catalogue import catalogue_text
from torch_pitfalls.loader import load_cases

ROOT = Path(__file__).resolve().parents[2]


def test_the_catalogue_is_generated_from_the_cases():
    committed = (ROOT / "cases" / "catalogue.csv").read_text(encoding="utf-8")
    assert committed == catalogue_text(ROOT / "cases"), "run: python -m torch_pitfalls.catalogue --write"


def test_every_case_declares_its_symptom_line():
    lacking = [lc.id for lc in load_cases(ROOT / "cases") if not lc.case.symptom_line]
    assert lacking == []


def test_every_case_tells_its_story_before_the_harness_section():
    """The first code cell after the title is what the broken code needs; nothing of the harness
    (CASE, symptom, check, near_miss) comes before the section 'How the harness checks it'."""
    from torch_pitfalls.casefile import HARNESS_HEADING, read_case

    for path in sorted((ROOT / "cases").glob("*/*.py")):
        text = path.read_text(encoding="utf-8")
        story, heading, _ = text.partition(f"# {HARNESS_HEADING}\n")
        assert heading, f"{path}: no section '{HARNESS_HEADING}'"
        for word in ("CASE = Case(", "def symptom(", "def check(", "def near_miss(", "import Affects", "Case,"):
            assert word not in story, f"{path}: {word!r} comes before the harness's section"
        assert read_case(path).story_cells[0].source.startswith("# "), f"{path}: the title comes first"
