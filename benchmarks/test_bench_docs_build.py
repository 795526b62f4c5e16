"""What `make docs` costs: the whole site (every case executed once, every page rendered), as a
fresh process each round: interpreter start, torch and Sphinx imports included. The goal is
≤ 60 s on the 2-core machine; the figure is printed and kept in the benchmark JSON, not asserted.
"""

import subprocess
import sys

import pytest
from case_modules import _CASES, ROOT

ROUNDS = 3


@pytest.mark.benchmark(group="docs-build")
def test_docs_build_whole_site(benchmark, tmp_path):
    pytest.importorskip("sphinx", reason="the docs extra is not installed (pip install -e '.[docs]')")
    out = tmp_path / "site"

    def build():
        subprocess.run(
            [sys.executable, "-m", "docs.site.build", "--out", str(out)], cwd=ROOT, check=True, capture_output=True
        )

    benchmark.pedantic(build, rounds=ROUNDS, iterations=1)
    pages = len(list((out / "cases").glob("*.html")))
    assert pages == len(_CASES)  # a build that skipped cases would time less work
    benchmark.extra_info.update(cases=len(_CASES), case_pages=pages)
