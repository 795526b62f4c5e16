"""The docs build's page cache: a kept case page is reused only while everything it was made from
is unchanged (docs.site.page_cache); tests/docs/test_docs_build.py rebuilds a site after an edit."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

import pytest

pytest.importorskip("nbformat", reason="the docs extra is not installed (pip install -e '.[test,docs]')")

from docs.site.page_cache import PageCache, code_and_machine  # noqa: E402


@dataclass
class Case:  # what the cache reads of a loaded case
    id: str
    path: Path

    @property
    def source_sha256(self) -> str:
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


def project(tmp_path):
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "render.py").write_text("PAGE = 1\n")
    (tmp_path / "reports").mkdir()
    (tmp_path / "reports" / "cpu.json").write_text("{}")
    (tmp_path / "cases" / "data").mkdir(parents=True)
    (tmp_path / "cases" / "catalogue.csv").write_text("id\n")
    case = Case("a-case", tmp_path / "cases" / "data" / "a_case.py")
    case.path.write_text("broken = 1\n")
    return case


def common(tmp_path, case, facts="explained: a-case"):
    return code_and_machine([tmp_path / "code"], tmp_path / "reports", tmp_path / "cases", {case.path.resolve()}, facts)


@pytest.mark.parametrize(
    "change",
    ["the code", "a record", "another file of the corpus", "the corpus's facts", "a setting"],
)
def test_the_common_key_changes_with_everything_a_page_is_made_from(tmp_path, monkeypatch, change):
    case = project(tmp_path)
    before = common(tmp_path, case)
    assert common(tmp_path, case) == before  # nothing changed: the same key
    facts = "explained: a-case"
    if change == "the code":
        (tmp_path / "code" / "render.py").write_text("PAGE = 2\n")
    elif change == "a record":
        (tmp_path / "reports" / "cpu.json").write_text('{"a-case": 1}')
    elif change == "another file of the corpus":
        (tmp_path / "cases" / "catalogue.csv").write_text("id\na-case\n")
    elif change == "the corpus's facts":
        facts = "explained: nothing"
    else:
        monkeypatch.setenv("PITFALLS_REPO_URL", "https://github.com/someone/torch-pitfalls")
    assert common(tmp_path, case, facts) != before


def test_a_kept_page_is_restored_until_its_case_changes(tmp_path):
    case = project(tmp_path)
    built = tmp_path / "built"
    (built / "cases").mkdir(parents=True)
    page, download = built / "cases" / "a-case.ipynb", built / "a_case.py"
    page.write_text("the page")
    download.write_text("the download")
    cache = PageCache(tmp_path / "cache", common(tmp_path, case), tmp_path)
    cache.store(case, page, [download])

    src, extra = tmp_path / "next" / "src", tmp_path / "next" / "extra"
    (src / "cases").mkdir(parents=True)
    assert cache.restore(case, src, extra)
    assert (src / "cases" / "a-case.ipynb").read_text() == "the page"
    assert (extra / "downloads" / "a_case.py").read_text() == "the download"

    case.path.write_text("broken = 2\n")  # the case edited: its page is made again
    assert not cache.restore(case, src, extra)
    other_machine = PageCache(tmp_path / "cache", "another machine", tmp_path)
    case.path.write_text("broken = 1\n")
    assert cache.restore(case, src, extra) and not other_machine.restore(case, src, extra)


def test_a_copy_cut_short_is_not_taken_for_a_kept_page(tmp_path):
    case = project(tmp_path)
    cache = PageCache(tmp_path / "cache", common(tmp_path, case), tmp_path)
    kept = tmp_path / "cache" / case.id
    (kept / "downloads").mkdir(parents=True)
    (kept / "page.ipynb").write_text("half a page")  # no key: the store stopped before its end
    src = tmp_path / "src"
    (src / "cases").mkdir(parents=True)
    assert not cache.restore(case, src, tmp_path / "extra")
    assert not (src / "cases" / "a-case.ipynb").exists()
