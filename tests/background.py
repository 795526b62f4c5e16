"""Whole corpus runs that tests read, started together as soon as collection ends.

Each run is a separate, whole run in a fresh interpreter (a pytest session, or ``pitfalls run``)
on a temp copy of the corpus. Started when pytest knows which tests were selected, they go on
beside the in-process ``cases/`` items instead of after them, so on a 2-core machine the suite
waits for the longest run rather than for their sum; no run is shortened to get there. A
fixture that reads a run waits for it; a run no selected test reads is never started. The docs
site is built from a sample of the corpus (``_site``): the whole one is `make docs`'s.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from planting import (
    ROOT,
    Corpus,
    case_source,
    copy_corpus,
    plant_rng_probes,
    plant_site_sample,
    runs_other_interpreters,
    subprocess_env,
)

from torch_pitfalls.helpers import stretched

TIMEOUT_S = 1200
PYTEST = [
    sys.executable,
    "-m",
    "pytest",
    "-p",
    "torch_pitfalls.run.plugin",
    "-p",
    "no:cacheprovider",
    "-p",
    "no:benchmark",
]
HARNESS = [sys.executable, "-m", "torch_pitfalls"]

# The faults planted beside part of the real corpus (tests/run/test_hardening_faults.py reads them).
NAN = "return torch.tensor(float('nan'), device=device)"
# Deaf to its own time limit, and asleep: a hang that burns no CPU the other runs need. It
# swallows the limit's exception whenever it comes, so the hang does not depend on reaching a
# line before the alarm (on a busy machine a worker can take longer than the 1 s limit to get
# there): only the parent's kill can end it.
HANG = """\
import time
while True:
    try:
        time.sleep(0.1)
    except BaseException:
        pass
"""
FAULTS = {
    "fault-syntax": dict(text="def broken(:\n"),
    "fault-missing-import": dict(text="import no_such_module_for_pitfalls\n" + case_source("fault-missing-import")),
    "fault-raises-in-fix": dict(fixed="raise RuntimeError('the fix itself is broken')"),
    "fault-segfault": dict(isolate=("cpu", "cuda"), broken="import ctypes\nctypes.string_at(0)"),
    "fault-hang": dict(isolate=("cpu", "cuda"), timeout=1.0, broken=HANG),
    # two globals whose leak would change many later cases (its file sorts before most of them)
    "fault-leaks-global": dict(broken=f"torch.set_default_dtype(torch.float64)\ntorch.set_grad_enabled(False)\n{NAN}"),
    "fault-prints-megabyte": dict(broken=f"import sys\nprint('x' * 2**20)\nsys.stderr.write('y' * 2**20)\n{NAN}"),
    "fault-leaves-file": dict(broken=f"with open('left-behind.txt', 'w') as f:\n    f.write('x')\n{NAN}"),
}
# Beside the other runs a worker's start may be slow: the hang is killed after 1 s + this.
WORKER_STARTUP_S = "10"


def _fault_env(root: Path) -> dict:
    """The faulty runs' environment. torch keeps a compile cache of its own, meant to outlive
    every run, under the temp folder unless told otherwise (2.13 makes it when an optimizer is
    built): it goes beside the temp folder, which must end empty of the harness's own files."""
    return {"PITFALLS_WORKER_STARTUP_S": WORKER_STARTUP_S, "TORCHINDUCTOR_CACHE_DIR": str(root / "torch-cache")}


@dataclass
class Finished:
    """A run that ended: its process (exit code, output), its report, where it ran."""

    proc: subprocess.CompletedProcess
    report: dict
    cwd: Path
    output: Path  # the report (or, for the site, the folder) it wrote
    tmpdir: Path | None = None
    corpus: Corpus | None = None
    extra: dict = field(default_factory=dict)


@dataclass
class Job:
    name: str
    proc: subprocess.Popen
    cmd: list[str]
    cwd: Path
    report: Path
    logs: Path
    tmpdir: Path | None
    corpus: Corpus | None
    extra: dict
    started: float = field(default_factory=time.monotonic)
    took_s: float | None = None  # wall seconds, set by a watcher thread when the run ends
    finished: Finished | None = None

    def watch(self) -> None:
        """Note when the run ends, whenever that is read (the terminal summary lists the times)."""

        def wait():
            self.proc.wait()
            self.took_s = time.monotonic() - self.started

        threading.Thread(target=wait, daemon=True).start()

    def wait(self) -> Finished:
        if self.finished is None:
            try:
                self.proc.wait(timeout=stretched(TIMEOUT_S))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            out = (self.logs / "stdout").read_text(errors="replace")
            err = (self.logs / "stderr").read_text(errors="replace")
            done = subprocess.CompletedProcess(self.cmd, self.proc.returncode, out, err)
            assert self.report.exists(), (
                f"{self.name}: no output (exit {done.returncode})\n{out[-3000:]}\n{err[-3000:]}"
            )
            from torch_pitfalls.run.report import load_report

            report = load_report(self.report) if self.report.suffix == ".json" else {}
            self.finished = Finished(done, report, self.cwd, self.report, self.tmpdir, self.corpus, self.extra)
        return self.finished


class Jobs:
    """The session's background runs, by name."""

    def __init__(self):
        self.base = Path(tempfile.mkdtemp(prefix="pitfalls-test-runs-"))
        self.jobs: dict[str, Job] = {}

    def get(self, name: str) -> Finished:
        if name not in self.jobs:  # not foreseen at collection (e.g. a fixture asked for late)
            self.start(name)
        return self.jobs[name].wait()

    def start(self, name: str) -> None:
        if name not in self.jobs:
            self.jobs[name] = getattr(self, f"_{name.replace('-', '_')}")(self.base / name)

    def times(self) -> list[str]:
        return [
            f"{name} {job.took_s:.0f} s" if job.took_s is not None else f"{name} unfinished"
            for name, job in self.jobs.items()
        ]

    def close(self) -> None:
        for job in self.jobs.values():
            if job.proc.poll() is None:
                job.proc.kill()
                job.proc.wait()
        shutil.rmtree(self.base, ignore_errors=True)

    def _launch(self, name, cmd, cwd, report, tmpdir=None, corpus=None, extra=None, **env) -> Job:
        logs = self.base / f"{name}-logs"
        logs.mkdir(parents=True)
        if tmpdir is not None:
            env["TMPDIR"] = str(tmpdir)
        with open(logs / "stdout", "w") as out, open(logs / "stderr", "w") as err:
            # The site is the longest run and the last read: the others yield the CPU to it and to
            # the foreground tests (a lower priority, never less work). The foreground is the chain
            # the suite waits for; these runs end well before it even at niceness 10 (make test here:
            # 136-141 s at 5, 129-131 s at 10, the runs 88-91 s against 78-91 s).
            proc = subprocess.Popen(
                [str(c) for c in cmd],
                cwd=cwd,
                env=subprocess_env(**env),
                stdout=out,
                stderr=err,
                preexec_fn=None if name == "site" else (lambda: os.nice(10)),
            )
        job = Job(name, proc, [str(c) for c in cmd], cwd, report, logs, tmpdir, corpus, extra or {})
        job.watch()
        return job

    # --- the runs ------------------------------------------------------------------------
    def _clean(self, root: Path) -> Job:
        """The real corpus in file order (what `make test`'s own cases/ items give)."""
        root.mkdir(parents=True)
        report = root / "clean.json"
        return self._launch("clean", [*HARNESS, "--cases", ROOT / "cases", "run", "-q", "--json", report], root, report)

    def _random(self, root: Path) -> Job:
        """The whole real corpus, RNG probes and an RNG-moving test beside it, shuffled (a new
        seed each session, printed to replay it) and shared by two xdist workers: both orders
        and the merging of two workers' records into one report are checked on this one run."""
        import random

        corpus = copy_corpus(root)
        probes = plant_rng_probes(corpus)
        seed = random.SystemRandom().randrange(2**31)
        print(f"random order: --random-order-bucket=global --random-order-seed={seed}")
        args = ["test_moves_rng.py", "cases", "--random-order-bucket=global", f"--random-order-seed={seed}", "-n", "2"]
        return self._launch(
            "random",
            [*PYTEST, *args, "--pitfalls-json", "random.json"],
            root,
            root / "random.json",
            corpus=corpus,
            extra={"probes": probes, "seed": seed},
        )

    def _faulty(self, root: Path) -> Corpus:
        if not (root / "cases").exists():
            corpus = copy_corpus(root, topics=("autograd", "numerics"))
            for case_id, fields in FAULTS.items():
                corpus.plant(case_id, **fields)
        return Corpus(root)

    def _faults_cli(self, root: Path) -> Job:
        corpus = self._faulty(self.base / "faulty-corpus")
        cwd, tmpdir = root / "cwd", root / "tmpdir"  # both empty: what is left in them afterwards was left there
        cwd.mkdir(parents=True), tmpdir.mkdir()
        report = root / "out" / "not-yet" / "report.json"
        cmd = [*HARNESS, "--cases", corpus.cases, "run", "--json", report]
        return self._launch("faults-cli", cmd, cwd, report, tmpdir, corpus, **_fault_env(root))

    def _faults_pytest(self, root: Path) -> Job:
        corpus = self._faulty(self.base / "faulty-corpus")
        tmpdir = root / "tmpdir"
        tmpdir.mkdir(parents=True)
        # verbose, as a user reads it: one line per item, and why each skip skipped
        cmd = [*PYTEST, "cases", "-v", "-rs", "--continue-on-collection-errors", "--pitfalls-json", "report.json"]
        return self._launch(
            "faults-pytest",
            cmd,
            corpus.root,
            corpus.root / "report.json",
            tmpdir,
            corpus,
            **_fault_env(root),
        )

    def _site(self, root: Path) -> Job:
        """The docs site of a sample of the corpus (``planting.plant_site_sample``), built the way
        `make docs` builds the whole one (every case's cells run once, both editions); the whole
        site is `make docs`'s, checked by the same tests in `make docs-check` (PITFALLS_SITE)."""
        project = root / "project"
        project.mkdir(parents=True)
        ids = plant_site_sample(project)
        out = root / "site"
        # one Sphinx reader: two cost 7% more CPU than one and were no faster, even alone
        cmd = [sys.executable, "-m", "docs.site.build", "--root", project, "--out", out]
        return self._launch("site", cmd, ROOT, out, extra={"root": project, "ids": ids})

    def _near_misses(self, root: Path) -> Job:
        """The near misses of the cases whose variants start other interpreters, each judged by its
        case's symptom (tests/near_miss_run.py): seconds of waiting on children apiece, done here
        beside the foreground instead of in it."""
        root.mkdir(parents=True)
        out = root / "near-misses.result"
        cmd = [sys.executable, ROOT / "tests" / "near_miss_run.py", out, *near_misses_elsewhere()]
        return self._launch("near-misses", cmd, root, out, PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}")

    def _install(self, root: Path) -> Job:
        """The wheel built, installed beside this torch in a fresh venv, and used from an empty
        directory (tests/install_run.py)."""
        root.mkdir(parents=True)
        out = root / "install.result"
        return self._launch(
            "install",
            [sys.executable, ROOT / "tests" / "install_run.py", out],
            root,
            out,
            PYTHONPATH=f"{ROOT}{os.pathsep}{ROOT / 'tests'}",
        )


def needed(items, has_case_items: bool) -> list[str]:
    """The runs the selected tests read, from the fixtures they use."""
    names = {name for item in items for name in getattr(item, "fixturenames", ())}
    runs = []
    if "clean_records" in names and not has_case_items:
        runs.append("clean")
    for fixture, run in (
        ("random_run", "random"),
        ("xdist_run", "random"),
        ("faults_cli", "faults-cli"),
        ("faults_pytest", "faults-pytest"),
        ("site", None if os.environ.get("PITFALLS_SITE") else "site"),  # a site built already: none to build
        ("installed", "install"),
        ("near_miss_verdicts", "near-misses"),
    ):
        if fixture in names and run:
            runs.append(run)
    if "run" in names and any("test_hardening_faults" in str(getattr(i, "path", "")) for i in items):
        runs += ["faults-cli", "faults-pytest"]
    # the longest first: the others fit beside it
    order = ["random", "site", "install", "faults-pytest", "faults-cli", "near-misses", "clean"]
    return sorted(dict.fromkeys(runs), key=order.index)


def near_misses_elsewhere() -> list[str]:
    """The cases whose near miss the background run judges: those with one whose variants start
    other interpreters (``planting.runs_other_interpreters``)."""
    from torch_pitfalls.loader import case_id_of, find_case_files

    return sorted(
        case_id_of(path)
        for path in find_case_files(ROOT / "cases")
        if runs_other_interpreters(path) and "def near_miss(" in path.read_text(encoding="utf-8")
    )
