"""The coverage page: docs/external_pitfalls.toml held against the corpus, its figures computed
from the list (checked here against a count made another way), bad lists refused by name."""

from __future__ import annotations

import re

import pytest
import tomllib
from planting import ROOT

pytest.importorskip("myst_parser", reason="the docs extras are not installed")

from docs.site.coverage_page import EXTERNAL_LIST, CoverageError, coverage_page, load_coverage  # noqa: E402
from torch_pitfalls.loader import load_cases  # noqa: E402

CASES = load_cases(ROOT / "cases")
IDS = {lc.id for lc in CASES}


def test_the_figures_are_the_lists_own():
    coverage = load_coverage(ROOT, IDS)
    raw = tomllib.loads((ROOT / EXTERNAL_LIST).read_text(encoding="utf-8"))["pitfall"]
    full = [p for p in raw if p["coverage"] == "full"]
    half = [p for p in raw if p["coverage"] == "partial"]
    assert coverage.unweighted == pytest.approx((len(full) + len(half) / 2) / len(raw))
    weight = sum(p["family_weight"] for p in raw)
    by_hand = (sum(p["family_weight"] for p in full) + sum(p["family_weight"] for p in half) / 2) / weight
    assert coverage.weighted == pytest.approx(by_hand)
    page = coverage_page(coverage, CASES)
    assert f"**{coverage.unweighted:.0%}** of the list" in page and f"**{coverage.weighted:.0%}** weighted" in page
    linked = set(re.findall(r"\(cases/([\w-]+)\.ipynb\)", page))
    assert linked == {c for p in raw for c in p["cases"]} and linked <= IDS


def test_a_list_naming_a_case_the_corpus_lacks_is_refused(tmp_path):
    text = (ROOT / EXTERNAL_LIST).read_text(encoding="utf-8")
    (tmp_path / "docs").mkdir()
    (tmp_path / EXTERNAL_LIST).write_text(
        text.replace('cases = ["frozen-by-name-filter"]', 'cases = ["no-such-case"]', 1)
    )
    with pytest.raises(CoverageError, match="names unknown case no-such-case"):
        load_coverage(tmp_path, IDS)


def test_a_project_without_a_list_says_so(tmp_path):
    assert load_coverage(tmp_path, IDS) is None
    assert "no independent list" in coverage_page(None, CASES)
