"""What `make docs` costs: the whole site (both editions, every page rendered), as a fresh
process each round: interpreter start, torch and Sphinx imports included. Twice: from nothing
(``--no-cache``: every case executed, as on a clean clone), and again with every case unchanged
(each case page kept from the build before, docs.site.page_cache). The goal is ≤ 60 s on the
2-core machine; the figures are printed and kept in the benchmark JSON, not asserted.
"""

import subprocess
import sys

import pytest
from case_modules import _CASES, ROOT

ROUNDS = 3


def _build(out, *flags):
    done = subprocess.run(
        [sys.executable, "-m", "docs.site.build", "--out", str(out), *flags], cwd=ROOT, check=True, capture_output=True
    )
    return done.stdout.decode()


@pytest.mark.benchmark(group="docs-build")
@pytest.mark.parametrize("cases", ["executed", "kept"])
def test_docs_build_whole_site(benchmark, tmp_path, cases):
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path / "site"
    flags = ["--no-cache"] if cases == "executed" else []
    if cases == "kept":
        _build(out)  # the build before: every case page kept
    printed = []
    benchmark.pedantic(lambda: printed.append(_build(out, *flags)), rounds=ROUNDS, iterations=1)
    pages = len(list((out / "cases").glob("*.html")))
    assert pages == len(_CASES)  # a build that skipped cases would time less work
    kept = f"{len(_CASES)} of them kept" in printed[-1]
    assert kept == (cases == "kept"), printed[-1]  # the build timed is the one named
    benchmark.extra_info.update(cases=len(_CASES), case_pages=pages, case_pages_kept=kept)
