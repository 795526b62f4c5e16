"""``pytest --pitfalls-watch``: a user's own test suite run under the watcher.

Each test's setup, call and teardown run with the watcher on; a failing test's exception is
handed to the explainer; the findings of the whole session (each with the first test that met
it) are printed at the end, and written as JSON with ``--pitfalls-watch-json PATH``.
Registered as a ``pytest11`` entry point; nothing is imported (torch included) unless asked."""

from __future__ import annotations

import json
from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("pitfalls-watch", "torch-pitfalls: the watcher (pitfalls watch) around your tests")
    group.addoption("--pitfalls-watch", action="store_true", help="run every test with the pitfalls watcher on")
    group.addoption(
        "--pitfalls-watch-pedantic", action="store_true", help="also the heuristic detectors (implies --pitfalls-watch)"
    )
    group.addoption(
        "--pitfalls-watch-json", metavar="PATH", help="write the findings as JSON (implies --pitfalls-watch)"
    )
    group.addoption(
        "--pitfalls-watch-fail",
        action="store_true",
        help="fail the session when something was found (implies --pitfalls-watch)",
    )


def pytest_configure(config):
    opt = config.getoption
    if (
        opt("pitfalls_watch")
        or opt("pitfalls_watch_pedantic")
        or opt("pitfalls_watch_json")
        or opt("pitfalls_watch_fail")
    ):
        config.pluginmanager.register(WatchSession(config), "pitfalls-watch-session")


class WatchSession:
    def __init__(self, config):
        from torch_pitfalls.watch.session import Watcher

        self.config = config
        self.watcher = Watcher(pedantic=config.getoption("pitfalls_watch_pedantic"))

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.watcher.context = item.nodeid
        self.watcher.start()
        try:
            yield
        finally:
            self.watcher.stop()
            self.watcher.context = ""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        outcome = yield
        report = outcome.get_result()
        if report.failed and call.excinfo is not None:
            self.watcher.explain_exception(call.excinfo.value)

    def pytest_sessionfinish(self, session):
        path = self.config.getoption("pitfalls_watch_json")
        if path:
            Path(path).write_text(json.dumps(self.watcher.to_json(), indent=1) + "\n", encoding="utf-8")
        if self.config.getoption("pitfalls_watch_fail") and self.watcher.findings and session.exitstatus == 0:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    def pytest_terminal_summary(self, terminalreporter):
        terminalreporter.section("pitfalls watch")
        for line in self.watcher.text().splitlines():
            terminalreporter.write_line(line)
