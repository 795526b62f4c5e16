"""The docs site's fixtures, shared by the browser tests (test_docs_site.py, test_site_browser.py):
one site build (the background run), one local server, one headless Debian Chromium.

Two modes. With PITFALLS_SITE=DIR (`make docs-check`, after `make docs` built build/site from the real project,
the way .ci/run runs these tests) the tests read that site and the whole real corpus. Without it
(`pytest tests/docs` alone) the site is built, in the background, from a sample project: a few real
cases and a copy of the reports (tests/planting.py, ``plant_site_sample``). Either way every test of
tests/docs runs (the site builder's own tests build planted projects of their own), and a test learns
which cases the site was built from through ``site_corpus``, never from ``cases/`` directly.
"""

from __future__ import annotations

import functools
import http.server
import os
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from browsing import local_page
from planting import ROOT

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


BUILT = os.environ.get("PITFALLS_SITE")  # a site built already from the real project (`make docs`)


@pytest.fixture(scope="session")
def site(jobs) -> Path:
    """The site: with PITFALLS_SITE, that folder (the whole site of the real project); else the
    sample's, built the way `make docs` builds the whole one, into a temp folder (started with the
    other runs when collection ends: ``background``)."""
    if BUILT:
        folder = Path(BUILT).resolve()
        assert (folder / "index.html").is_file() and (folder / "zh" / "index.html").is_file(), (
            f"PITFALLS_SITE={BUILT}: no built site there (make docs builds build/site)"
        )
        return folder
    built = jobs.get("site")
    assert built.proc.returncode == 0, built.proc.stderr[-3000:]
    return built.output


@dataclass
class SiteCorpus:
    """The project a site was built from: its root (cases/ and reports/) and its cases, loaded."""

    root: Path
    cases: list
    ids: set[str] = field(init=False)

    def __post_init__(self):
        self.ids = {lc.id for lc in self.cases}

    @functools.cached_property
    def matrix(self):
        from torch_pitfalls.matrix import load_matrix

        return load_matrix(self.root / "reports", self.root / "cases")


@pytest.fixture(scope="session")
def real_cases() -> list:
    """The real corpus, loaded once for the docs tests."""
    from torch_pitfalls.loader import load_cases

    return load_cases(ROOT / "cases")


@pytest.fixture(scope="session")
def site_corpus(site, jobs, real_cases) -> SiteCorpus:
    """The corpus ``site`` was built from: the real one (PITFALLS_SITE), or the sample. The sample's
    cases are the real modules of its ids (its files are copies of them), not loaded again."""
    if BUILT:
        return SiteCorpus(ROOT, real_cases)
    built = jobs.get("site")
    ids = set(built.extra["ids"])
    cases = [lc for lc in real_cases if lc.id in ids]
    assert {lc.id for lc in cases} == ids
    return SiteCorpus(built.extra["root"], cases)


@pytest.fixture(scope="session")
def base_url(site):
    handler = functools.partial(_QuietHandler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)  # port 0: a free one
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}/"
    server.shutdown()
    server.server_close()


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@pytest.fixture(scope="session")
def browser():
    if not CHROMIUM.exists():
        pytest.skip(f"{CHROMIUM} is absent: apt-get update && apt-get install -y chromium")
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright is not installed (pip install -e '.[docs]')"
    )
    with sync_api.sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        yield browser
        browser.close()


@pytest.fixture(scope="session")
def wait_ms(browser, base_url) -> float:
    """How long a page may take to do what a test waits for (a search's results, a navigation):
    50 times what loading the home page (its script and its 107-row table) takes here and now,
    and never less than Playwright's own default of 30 s. On a busy machine both slow down
    together, so the margin follows the load instead of being a guess made on a quiet one."""
    context = browser.new_context()
    page = context.new_page()
    started = time.perf_counter()
    page.goto(base_url + "index.html", wait_until="load", timeout=0)  # no limit: this is the measure
    took_ms = (time.perf_counter() - started) * 1000
    context.close()
    return max(30_000.0, 50 * took_ms)


@pytest.fixture
def page(browser, base_url, wait_ms):
    """A page that may load only from the local server: any other request is refused and named."""
    context, page, outside = local_page(
        browser, base_url, wait_ms, viewport={"width": 1280, "height": 900}, accept_downloads=True
    )
    yield page
    context.close()
    assert outside == [], f"the site asked for resources outside localhost: {outside}"
