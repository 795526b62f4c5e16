"""Fixtures of the harness's own tests."""

from __future__ import annotations

import os

import pytest
from planting import ROOT, Corpus, real_case_ids

pytest_plugins = ["pytester"]


@pytest.fixture
def corpus(tmp_path) -> Corpus:
    return Corpus(tmp_path)


@pytest.fixture
def project(corpus) -> Corpus:
    """Two planted cases and an empty reports folder (the matrix's and the import's tests)."""
    for case_id in ("first-case", "second-case"):
        corpus.plant(case_id)
    corpus.reports = corpus.root / "reports"
    corpus.reports.mkdir()
    return corpus


@pytest.fixture
def planted(pytester, monkeypatch) -> Corpus:
    """A corpus inside pytester's directory, run with ``pytester.runpytest_subprocess``."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return Corpus(pytester.path)


# Tests that read a background run go last, the site's last of all: the foreground does every
# other test while those runs go on, instead of waiting for each in file order.
READS_A_RUN = {
    "clean_records",
    "random_run",
    "xdist_run",
    "faults_cli",
    "faults_pytest",
    "installed",
    "near_miss_verdicts",
}
READS_THE_SITE = {"site", "page"}


def pytest_collection_modifyitems(session, config, items):
    def rank(item):
        names = set(getattr(item, "fixturenames", ()))
        return 2 if names & READS_THE_SITE else 1 if names & READS_A_RUN else 0

    items.sort(key=rank)  # stable: file order within each rank


def pytest_collection_finish(session):
    """Start the whole-corpus runs the selected tests read, all at once (``background``)."""
    from background import Jobs, needed

    has_case_items = any(type(item).__name__ == "CaseItem" for item in session.items)
    runs = needed(session.items, has_case_items)
    if runs:
        jobs = session.config.stash.setdefault(jobs_key, Jobs())
        for name in runs:
            jobs.start(name)


def pytest_terminal_summary(terminalreporter):
    """How long each background run took (wall): the figures TIMEOUT_S is derived from."""
    jobs = terminalreporter.config.stash.get(jobs_key, None)
    if jobs is not None and jobs.jobs:
        terminalreporter.write_line("background runs: " + ", ".join(jobs.times()))


def pytest_sessionfinish(session):
    jobs = session.config.stash.get(jobs_key, None)
    if jobs is not None:
        jobs.close()


jobs_key = pytest.StashKey[object]()


@pytest.fixture(scope="session")
def jobs(request):
    from background import Jobs

    return request.config.stash.setdefault(jobs_key, Jobs())


@pytest.fixture(scope="session")
def clean_records(request, jobs) -> dict:
    """The real corpus's records from a plain run, (case, device) -> record dict: what every
    other run is compared with. ``make test`` runs ``cases/`` before ``tests/`` in one session,
    so that run is reused (the plugin keeps its records); run alone, ``tests/`` makes one."""
    from dataclasses import asdict

    from torch_pitfalls.run.plugin import records_key

    real = real_case_ids()
    mine = {(r.case, r.device): asdict(r) for r in request.config.stash.get(records_key, []) if r.case in real}
    if {case for case, _ in mine} == real and len(mine) == len(real) * 2:
        return mine
    return {(r["case"], r["device"]): r for r in jobs.get("clean").report["records"] if r["case"] in real}


@pytest.fixture(scope="session")
def random_run(jobs):
    """The whole real corpus, RNG probes and an RNG-moving test beside it, shuffled."""
    run = jobs.get("random")
    assert f"--random-order-seed={run.extra['seed']}" in run.proc.stdout  # the plugin did shuffle, with this seed
    # a fresh pytest session over a corpus whose every case passes exits 0
    assert run.proc.returncode == 0, run.proc.stdout[-3000:] + run.proc.stderr[-3000:]
    return run


@pytest.fixture(scope="session")
def near_miss_verdicts(jobs) -> dict:
    """case id -> the near miss's verdict (produced something, accepted by the symptom, summary),
    for the cases whose variants start other interpreters (``background._near_misses``)."""
    import json

    run = jobs.get("near-misses")
    assert run.proc.returncode == 0, run.proc.stderr[-3000:]
    return json.loads(run.output.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def faults_cli(jobs):
    """The faulty corpus (``background.FAULTS`` beside two real topics) through ``pitfalls run``."""
    return jobs.get("faults-cli")


@pytest.fixture(scope="session")
def faults_pytest(jobs):
    """The same corpus through pytest with the plugin, in a fresh interpreter, verbose (``-v -rs``)."""
    return jobs.get("faults-pytest")


@pytest.fixture(scope="session")
def xdist_run(random_run):
    """The shuffled run is also the two-worker one (``background._random``)."""
    return random_run
