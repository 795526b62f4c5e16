"""The pytest plugin: every case module becomes one test item per device.

Registered as a ``pytest11`` entry point (and by the checkout's conftest.py), so ``pytest cases/``
and ``pytest --pyargs torch_pitfalls.cases`` need no flags. Items are named
``<id>[<device>]``, marked with their kind, topic, device and tags (``-m silent``, ``-m cuda``),
and pass when the observed symptom equals the expected one and the fix holds.

Each item's record travels in its report (``user_properties``), and the records of a run are
gathered from the reports: under pytest-xdist only reports reach the controller, which then
writes the one JSON report and prints the one summary table. A case file that cannot be loaded
is a collection error and an ``error`` record, as in ``pitfalls run``.
"""

from __future__ import annotations

import datetime as dt
import importlib.util
from dataclasses import asdict
from pathlib import Path

import pytest

from torch_pitfalls.case import DEVICES, KINDS, TOPICS
from torch_pitfalls.loader import LoadError, duplicate_id, is_case_file, load_case
from torch_pitfalls.run.report import Record, build_report, summary_table, write_report

records_key = pytest.StashKey[list]()
ids_key = pytest.StashKey[dict]()
started_key = pytest.StashKey[dt.datetime]()


def pytest_addoption(parser):
    group = parser.getgroup("pitfalls", "torch-pitfalls corpus")
    group.addoption(
        "--pitfalls-json",
        metavar="PATH",
        default=None,
        help="write the JSON report of the case items run to PATH (folders are created)",
    )
    parser.addini("pitfalls_json", "default for --pitfalls-json", default=None)


def pytest_configure(config):
    for kind in KINDS:
        config.addinivalue_line("markers", f"{kind}: pitfall cases of kind '{kind}'")
    for topic in TOPICS:
        config.addinivalue_line("markers", f"{topic}: pitfall cases of topic '{topic}'")
    for device in DEVICES:
        config.addinivalue_line("markers", f"{device}: pitfall case items run on {device}")
    config.stash[records_key] = []
    config.stash[ids_key] = {}
    config.stash[started_key] = dt.datetime.now(dt.timezone.utc)
    config.pluginmanager.register(RecordCollector(config), "pitfalls-records")


class RecordCollector:
    """Gathers the run's records from test and collection reports, in whichever process gets
    them: the only process without xdist, the controller (and each worker, unused) with it."""

    def __init__(self, config):
        self.config = config
        self.keys: set[tuple[str, str]] = set()

    def add(self, record: Record) -> None:
        key = (record.case, record.device)
        if key not in self.keys:  # xdist: each worker reports the same collection error
            self.keys.add(key)
            self.config.stash[records_key].append(record)

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            for name, value in report.user_properties:
                if name == "pitfalls_record":
                    self.add(Record(**value))

    def pytest_collectreport(self, report):
        path = Path(report.nodeid)
        if report.failed and is_case_file(path):
            where = f"{self.config.rootpath / path}: "
            problem = report.longreprtext.strip().splitlines()[-1] if report.longreprtext.strip() else "not collected"
            from torch_pitfalls.run.runner import load_error_record  # torch is imported only where a case runs

            self.add(load_error_record(LoadError(path, problem.removeprefix(where))))


def pytest_collection_finish(session):
    """Case items and an environment that cannot give true verdicts (a broken NumPy bridge):
    stop with the reason instead of failing every case that crosses it."""
    if not any(isinstance(item, CaseItem) for item in session.items):
        return
    from torch_pitfalls.run.environment import environment_error

    error = environment_error("no case was run")
    if error:
        pytest.exit(error, returncode=2)


def pytest_report_header(config):
    if importlib.util.find_spec("torch") is None:  # installed, the plugin loads in every pytest run
        return "torch-pitfalls: torch is not installed here: install the torch to test, then run the cases"
    import torch

    from torch_pitfalls.run.devices import device_unavailable_reason

    cuda = device_unavailable_reason("cuda") or f"CUDA {torch.version.cuda}, {torch.cuda.get_device_name(0)}"
    return f"torch-pitfalls: torch {torch.__version__}; {cuda}"


def pytest_collect_file(file_path, parent):
    if is_case_file(file_path):
        return CaseFile.from_parent(parent, path=file_path)
    return None


class CaseFile(pytest.File):
    def collect(self):
        try:
            lc = load_case(self.path)
        except LoadError as exc:
            raise self.CollectError(str(exc)) from None
        ids = self.config.stash[ids_key]
        if ids.setdefault(lc.id, self.path) != self.path:
            raise self.CollectError(str(duplicate_id(self.path, lc.id, ids[lc.id])))
        for device in DEVICES:
            yield CaseItem.from_parent(self, name=f"{lc.id}[{device}]", lc=lc, device=device)


class PitfallFailure(Exception):
    def __init__(self, record: Record):
        self.record = record


class CaseItem(pytest.Item):
    def __init__(self, *, lc, device, **kwargs):
        super().__init__(**kwargs)
        self.lc, self.device = lc, device
        registered = {line.split(":")[0] for line in self.config.getini("markers")}
        for name in (lc.case.kind, lc.topic, device, *lc.case.tags):
            if name not in registered:
                self.config.addinivalue_line("markers", f"{name}: pitfall cases tagged '{name}'")
                registered.add(name)
            self.add_marker(name)

    def runtest(self):
        from torch_pitfalls.run.runner import run_case

        record = run_case(self.lc, self.device)
        self.user_properties.append(("pitfalls_record", asdict(record)))
        if record.outcome in ("skipped", "unverified"):
            # reported at the item ("cases/x.py::id[cuda]"), not at this line of the plugin;
            # an unverified cell is not a pass: pytest shows it as a skip, with its reason
            reason = record.detail if record.outcome == "skipped" else f"unverified: {record.detail}"
            raise pytest.skip.Exception(reason, _use_item_location=True)
        if record.failed:
            raise PitfallFailure(record)

    def repr_failure(self, excinfo, style=None):
        if isinstance(excinfo.value, PitfallFailure):
            r = excinfo.value.record
            return "\n".join(
                [
                    f"{r.case} [{r.device}]: {r.outcome}: {r.detail}",
                    f"  expected symptom: {'yes' if r.expected else 'no'}; observed: "
                    + {True: "yes", False: "no", None: "no verdict"}[r.observed]
                    + (f" (form {r.form!r})" if r.form else ""),
                    f"  broken variant: {r.broken or '(did not run)'}",
                    f"  fixed variant:  {r.fixed or '(did not run)'}",
                ]
            )
        return super().repr_failure(excinfo, style=style)

    def reportinfo(self):
        return self.path, 0, f"{self.lc.id}[{self.device}]"


report_path_key = pytest.StashKey[str]()


def _is_xdist_worker(config) -> bool:
    return hasattr(config, "workerinput")


def pytest_sessionfinish(session):
    config = session.config
    if _is_xdist_worker(config):  # the controller writes the report of the whole run
        return
    records = config.stash.get(records_key, [])
    path = config.getoption("pitfalls_json") or config.getini("pitfalls_json")
    if path and records:
        config.stash[report_path_key] = str(write_report(build_report(records, config.stash[started_key]), path))


def pytest_terminal_summary(terminalreporter, config):
    if _is_xdist_worker(config):
        return
    records = config.stash.get(records_key, [])
    if records:
        terminalreporter.section("torch-pitfalls")
        terminalreporter.write_line(summary_table(records))
    if report_path_key in config.stash:
        terminalreporter.write_line(f"report written to {config.stash[report_path_key]}")
