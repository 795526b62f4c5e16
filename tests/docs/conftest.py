"""The docs site's fixtures, shared by the browser tests (test_docs_site.py, test_site_browser.py):
one site build (the background run), one local server, one headless Debian Chromium."""

from __future__ import annotations

import functools
import http.server
import threading
import time
from pathlib import Path

import pytest
from browsing import local_page

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


@pytest.fixture(scope="session")
def site(jobs) -> Path:
    """The whole site, built the way `make docs` builds it, into a temp folder (started with the
    other whole runs when collection ends: ``background``)."""
    built = jobs.get("site")
    assert built.proc.returncode == 0, built.proc.stderr[-3000:]
    return built.output


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
