"""The docs site as a reader meets it: built once per session, served on localhost, driven in
headless Debian Chromium (apt-get install chromium; no browser is downloaded). The fixtures
(site, site_corpus, base_url, browser, page) are in conftest.py, shared with test_site_browser.py:
the site is the whole real one in `make docs-check` (PITFALLS_SITE), a sample's when run alone, and every
count here is the count of the corpus it was built from (``site_corpus``)."""

from __future__ import annotations

import re

import nbformat
import pytest
import torch
from planting import ROOT

SCREENSHOTS = ROOT / "build" / "screenshots"

pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[test,docs]')")
pytest.importorskip("myst_nb", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from torch_pitfalls import observe  # noqa: E402


def test_every_case_has_a_page_and_the_site_has_its_other_pages(site, site_corpus):
    cases = site_corpus.cases
    assert sorted(p.stem for p in (site / "cases").glob("*.html")) == sorted(lc.id for lc in cases)
    assert sorted(p.stem for p in (site / "topics").glob("*.html")) == sorted({lc.topic for lc in cases})
    for name in ("index.html", "matrix.html", "upgrade.html", "linters.html", "performance.html", "search.html"):
        assert (site / name).is_file(), name


def visible_ids(page) -> list[str]:
    return page.eval_on_selector_all("#cases-table tbody tr:not([hidden])", "rows => rows.map(r => r.dataset.id)")


def test_home_table_filters_by_topic_kind_and_tag(page, site_corpus):
    cases = site_corpus.cases
    page.goto(page.base + "index.html")
    everything = sorted(lc.id for lc in cases)
    assert sorted(visible_ids(page)) == everything

    page.select_option("#filter-topic", "autograd")
    autograd = sorted(lc.id for lc in cases if lc.topic == "autograd")
    assert sorted(visible_ids(page)) == autograd
    assert page.inner_text("#cases-shown") == f"{len(autograd)} of {len(cases)} cases"
    assert page.locator("#cases-table tbody tr[data-id='stack-vs-cat']").is_hidden()

    page.select_option("#filter-kind", "silent")
    silent = sorted(lc.id for lc in cases if lc.topic == "autograd" and lc.case.kind == "silent")
    assert silent and sorted(visible_ids(page)) == silent  # nan-grad-through-mask, in a sample site too

    page.select_option("#filter-topic", "")
    page.select_option("#filter-kind", "")
    page.select_option("#filter-tag", "retain_graph")
    assert sorted(visible_ids(page)) == sorted(lc.id for lc in cases if "retain_graph" in lc.case.tags)
    page.select_option("#filter-tag", "")
    assert sorted(visible_ids(page)) == everything


def test_search_finds_a_case_by_its_error_message(page):
    page.goto(page.base + "index.html")
    box = page.locator("input[name='q']").first
    box.fill("second time")
    box.press("Enter")
    link = page.locator("#search-results a[href*='cases/backward-twice.html']").first
    link.wait_for()
    link.click()
    page.wait_for_url(re.compile(r"cases/backward-twice\.html"))
    assert page.inner_text("h1").startswith("Backward through a graph that was already freed")


def test_gradcheck_is_found_by_jacobian(page):
    page.goto(page.base + "search.html?q=Jacobian")
    page.locator("#search-results a[href*='cases/gradcheck-float32.html']").first.wait_for()


def test_case_page_shows_the_broken_variants_real_output_and_the_torch_stamp(page, site_corpus):
    case = next(lc for lc in site_corpus.cases if lc.id == "backward-twice")
    from docs.site.outputs import error_text

    # what a person calling broken("cpu") sees here: the exception's line, whole
    live = error_text(observe(case.module.broken, "cpu").error)
    assert "second time" in live
    page.goto(page.base + "cases/backward-twice.html")
    outputs = page.locator(".cell_output pre").all_inner_texts()
    assert live in [text.strip() for text in outputs]
    stamps = page.locator(".pitfalls-stamp").all_inner_texts()
    assert len(stamps) == 2  # one per cell with output: broken("cpu") and fixed("cpu")
    assert all(f"torch {torch.__version__} · cpu" in s for s in stamps), stamps
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SCREENSHOTS / "case-page.png"), full_page=True)


def test_case_page_shows_its_row_of_the_version_matrix_its_evidence_and_folds_its_metadata(page, site_corpus):
    from torch_pitfalls.matrix.cli import MARKS

    matrix = site_corpus.matrix
    page.goto(page.base + "cases/backward-twice.html")
    shown = page.locator("table.case-row tbody tr").first.locator("td").all_inner_texts()
    assert [t.strip()[:1] for t in shown] == [
        MARKS[c.status].strip() or "·" for c in matrix.row("backward-twice", matrix.devices[0])
    ]
    evidence = page.locator("section#what-the-claims-rest-on").inner_text()
    for device in matrix.devices:  # each column of the matrix (cpu, a contributed cuda:<model>) says what it saw
        seen = any(c.status == "reproduced" for c in matrix.row("backward-twice", device))
        assert (f"{device}: symptom observed on " in evidence) == seen, (device, evidence)
    if not any(d.split(":")[0] == "cuda" for d in matrix.devices):  # no GPU report at all: said as such
        assert "cuda: the symptom is not observed" in evidence
    # the CASE = Case(...) cell is folded behind a toggle: not shown until opened
    assert not page.get_by_text("CASE = Case(", exact=False).first.is_visible()


def test_matrix_page_leads_with_changes_and_shows_every_release_unclipped(page, site_corpus):
    matrix = site_corpus.matrix
    page.goto(page.base + "matrix.html")
    table = page.locator("table#matrix-cpu")
    if matrix.versions and any(matrix.changes(c.id) for c in matrix.cases):
        heads = table.locator("thead th").all_inner_texts()
        assert len(heads) == 1 + len(matrix.versions)
        # every column fits: the table does not scroll sideways in a 1280-pixel window
        assert table.evaluate("t => t.scrollWidth <= t.clientWidth + 1"), "the matrix is clipped"
        assert table.locator("td.changed").count() >= 1
    assert "Unchanged on every release" in page.content()


def test_upgrade_page_lists_consecutive_releases(page, site_corpus):
    matrix = site_corpus.matrix
    page.goto(page.base + "upgrade.html")
    text = page.locator("article").inner_text()
    for a, b in zip(matrix.versions, matrix.versions[1:]):
        assert f"{a} → {b} (cpu)" in text
    # the environment's breaks no case can show, after the releases (docs/site/upgrade_environment.md)
    headings = page.locator("article h3").all_inner_texts()
    assert headings[-2:] == ["NumPy 2 beside a torch older than 2.3", "A compiled extension after a torch upgrade"]


def test_each_releases_kinds_of_change_are_a_list_of_their_own(site):
    """Under "N changes in M cases, by kind:" the kinds (a number and a kind each) form their own list; the
    cases, with their links, a second one (one list read as the cases' first items)."""
    for edition in (site / "upgrade.html", site / "zh" / "upgrade.html"):
        html = edition.read_text(encoding="utf-8")
        lists = re.findall(r"(?:by kind:|按类型：)(?:</span>)?</p>\s*<ul[^>]*>(.*?)</ul>", html, re.S)
        assert lists, f"{edition}: no list of kinds after a release's count"
        for kinds in lists:
            assert "<code" in kinds and "<a " not in kinds, f"{edition}: a case in the list of kinds"


def test_the_upgrade_topic_shows_each_boundary_as_observed(page):
    page.goto(page.base + "topics/upgrade.html")
    text = page.locator("article").inner_text()
    assert "first seen by the matrix" in text
    row = page.locator("tr", has_text="zero-grad-set-to-none").inner_text()
    assert "2.0.1" in row and "1.13.1: absent" in row and "yes" in row


def test_the_linters_page_and_a_case_pages_linter_line(page, site_corpus):
    import json

    bench = json.loads((site_corpus.root / "reports" / "lint-bench.json").read_text())
    page.goto(page.base + "linters.html")
    text = page.locator("article").inner_text()
    t = bench["totals"]
    assert f"catches {t['pitfalls-lint']['catches']} and fires on 0 fixed programs" in text
    assert "PTF101" in text and "zero-grad-set-to-none" in text
    page.goto(page.base + "cases/weight-norm-deprecated.html")
    about = page.locator("details.case-about")
    assert not about.get_attribute("open")  # folded below the lesson: a reader opens it
    about.locator("summary").click()
    line = about.locator("p", has_text="Linters").first.inner_text()
    assert "pitfalls lint reports PTF111 on the broken code" in line and "TOR101" in line


def test_notebook_download_is_a_valid_notebook_with_outputs(page, tmp_path):
    page.goto(page.base + "cases/backward-twice.html")
    with page.expect_download() as download:
        page.locator("a.download-ipynb").first.click()
    path = tmp_path / download.value.suggested_filename
    download.value.save_as(path)
    notebook = nbformat.read(path, as_version=4)
    nbformat.validate(notebook)
    assert notebook.cells[1].source.startswith("**To run this notebook**")  # with torch alone
    assert not any("harness" in c.source for c in notebook.cells if c.cell_type == "code")
    texts = [o.get("text", "") for c in notebook.cells if c.cell_type == "code" for o in c.outputs]
    assert any("second time" in t for t in texts)
    assert notebook.metadata["torch_pitfalls"]["torch"] == torch.__version__


def test_pages_name_no_outside_resource(site):
    # The browser tests catch requests made; this catches every page, including unvisited ones.
    outside = re.compile(r"""<(?:script|link|img|iframe)\b[^>]*\b(?:src|href)=["'](?:https?:)?//""", re.I)
    offenders = [
        str(p.relative_to(site)) for p in site.rglob("*.html") if outside.search(p.read_text(encoding="utf-8"))
    ]
    assert offenders == []
