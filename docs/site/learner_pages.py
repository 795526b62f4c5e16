"""The pages written for a learner beside the case pages: "Start here", the symptom index, "About
the corpus", the upgrade picker's data, and every page's one-sentence description."""

from __future__ import annotations

import json
from pathlib import Path

from docs.site.coverage_page import Coverage, CoverageError, coverage_page, load_coverage
from docs.site.home_page import about_page, topics_of
from docs.site.site_extension import DESCRIPTIONS
from docs.site.start_page import start_page
from docs.site.symptom_page import Symptom, SymptomError, load_symptoms, symptom_page
from docs.site.upgrade_page import upgrade_files
from torch_pitfalls.loader import LoadedCase
from torch_pitfalls.matrix import Matrix

PAGE_DESCRIPTIONS = {
    "index": "PyTorch pitfalls, each shown by the smallest program that has it, what it really prints, why, and the fix.",
    "start": "How to read a case of torch-pitfalls, and ten PyTorch pitfalls to begin with.",
    "symptoms": "Find a PyTorch pitfall by what you see: NaN, a wrong shape, silently wrong values, slowness, an error or a warning.",
    "upgrade": "What changes between two torch releases, observed case by case: pick the releases you upgrade between.",
    "matrix": "What every case did on every recorded torch release, leading with the cases whose behaviour changed.",
    "about": "How torch-pitfalls proves each pitfall and its fix, what its recorded runs observed, and how to run it.",
    "coverage": "An independent list of the PyTorch pitfalls users hit, from sources this project did not write, held against the corpus.",
    "linters": "Which PyTorch pitfalls a static checker finds: pitfalls lint and TorchFix measured on every case.",
    "watching": "Which pitfalls the watcher finds in a running program, and which none of the tools can see.",
    "performance": "What the performance pitfalls cost: the broken code's time or memory against the fix's.",
    "writing-a-case": "How to add a pitfall to torch-pitfalls: one module that is a test, a notebook and a page.",
}


def symptoms_for(root: Path, cases: list[LoadedCase]) -> dict[str, Symptom]:
    """The symptom lines the cases declare (every case's, or none for a planted corpus)."""
    return load_symptoms(cases)


def coverage_for(root: Path, cases: list[LoadedCase]) -> Coverage | None:
    """The project's independent list of pitfalls, checked against its cases (None without one)."""
    return load_coverage(root, {lc.id for lc in cases})


def write_learner_pages(
    src: Path,
    extra: Path,
    cases: list[LoadedCase],
    m: Matrix,
    symptoms: dict[str, Symptom],
    coverage: Coverage | None = None,
) -> None:
    (src / "start.md").write_text(start_page(cases, symptoms), encoding="utf-8")
    (src / "symptoms.md").write_text(symptom_page(cases, symptoms), encoding="utf-8")
    (src / "about.md").write_text(about_page(cases, m), encoding="utf-8")
    (src / "coverage.md").write_text(coverage_page(coverage, cases), encoding="utf-8")
    for relative, text in upgrade_files(m).items():
        path = extra / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    (src / DESCRIPTIONS).write_text(json.dumps(descriptions(cases, symptoms), ensure_ascii=False), encoding="utf-8")


def descriptions(cases: list[LoadedCase], symptoms: dict[str, Symptom]) -> dict[str, str]:
    out = dict(PAGE_DESCRIPTIONS)
    for topic in topics_of(cases):
        n = sum(lc.topic == topic for lc in cases)
        out[f"topics/{topic}"] = (
            f"{n} PyTorch pitfalls about {topic}, each with its broken code, its output and the fix."
        )
    for lc in cases:
        seen = symptoms.get(lc.id)
        out[f"cases/{lc.id}"] = (
            f"{lc.case.title}. {seen.line}" if seen else f"{lc.case.title}: a PyTorch pitfall and its fix."
        )
    return out


__all__ = ["CoverageError", "SymptomError", "coverage_for", "symptoms_for", "write_learner_pages"]
