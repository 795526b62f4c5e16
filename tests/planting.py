"""Planted cases for the harness's own tests: small case modules written into a temp dir."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

from torch_pitfalls.helpers import stretched

ROOT = Path(__file__).resolve().parent.parent

CASE_TEMPLATE = """\
import torch
from torch_pitfalls import Affects, Case, Source

CASE = Case(
    id={id!r},
    title="a planted case",
    kind={kind!r},
    affects={affects},
    devices={devices!r},
    sources=(Source("planted by the harness tests"),),
    tags={tags!r},
    isolate={isolate!r},
    timeout={timeout!r},
    requires={requires!r},
)

def broken(device):
{broken}

def symptom(run):
{symptom}

def fixed(device):
{fixed}

def check(run, device):
{check}
"""

# A case whose symptom shows everywhere: the broken variant returns NaN, the fix returns 1.
GOOD = dict(
    kind="silent",
    affects="'*'",
    devices=("cpu", "cuda"),
    tags=(),
    isolate=(),
    timeout=30.0,
    requires=(),
    broken="return torch.tensor(float('nan'), device=device)",
    symptom="return bool(torch.isnan(run.value))",
    fixed="return torch.tensor(1.0, device=device)",
    check="torch.testing.assert_close(run.value, torch.tensor(1.0, device=device))",
)


def case_source(case_id: str, **overrides) -> str:
    fields = {**GOOD, **overrides}
    for name in ("broken", "symptom", "fixed", "check"):
        fields[name] = textwrap.indent(textwrap.dedent(fields[name]).strip(), "    ")
    return CASE_TEMPLATE.format(id=case_id, **fields)


class Corpus:
    """A temp project with a ``cases/`` folder to plant cases in."""

    def __init__(self, root: Path):
        self.root = root
        self.cases = root / "cases"

    def plant(
        self, case_id: str, topic: str = "autograd", filename: str | None = None, text: str | None = None, **fields
    ) -> Path:
        folder = self.cases / topic
        folder.mkdir(parents=True, exist_ok=True)
        marker = self.cases / "catalogue.csv"  # what makes a cases/ folder a corpus (loader.is_case_file)
        if not marker.exists():
            marker.write_text("id,topic,sources,devices,kind,star\n")
        path = folder / (filename or case_id.replace("-", "_") + ".py")
        path.write_text(text if text is not None else case_source(case_id, **fields))
        return path


def copy_corpus(root: Path, topics: tuple[str, ...] | None = None) -> Corpus:
    """A temp copy of the project's real ``cases/`` folder (or of some topics of it), to plant
    faults and probes beside."""
    if topics is None:
        shutil.copytree(ROOT / "cases", root / "cases", ignore=shutil.ignore_patterns("__pycache__"))
    else:
        for topic in topics:
            shutil.copytree(
                ROOT / "cases" / topic, root / "cases" / topic, ignore=shutil.ignore_patterns("__pycache__")
            )
        shutil.copy(ROOT / "cases" / "catalogue.csv", root / "cases" / "catalogue.csv")
    return Corpus(root)


def copied_case_ids(corpus: Corpus) -> set[str]:
    from torch_pitfalls.loader import case_id_of, find_case_files

    real = real_case_ids()
    return {case_id_of(p) for p in find_case_files(corpus.cases)} & real


# A case whose variants start other interpreters (run_python, a launcher, spawned ranks): a watcher
# or explainer in this process sees nothing of them, and each run costs seconds.
_OTHER_INTERPRETERS = re.compile(
    r"\brun_pythons?\(|\bsubprocess\.(?:run|Popen|check_output|check_call|call)\(|\bspawn\("
)


def runs_other_interpreters(path: Path) -> bool:
    return _OTHER_INTERPRETERS.search(Path(path).read_text(encoding="utf-8")) is not None


_VARIANT_RUNS: dict = {}


def variant_run(lc, variant: str):
    """One run of a case's variant on the CPU as the runner makes it (``run_variant``: RNGs seeded,
    global state guarded), shared by every test that reads one: the predicates, the explainer's
    proofs and the watcher's comparison each used to run the same variant again."""
    from torch_pitfalls.run.runner import run_variant

    key = (lc.id, variant)
    if key not in _VARIANT_RUNS:
        _VARIANT_RUNS[key] = run_variant(getattr(lc.module, variant), "cpu", lc.case.timeout, variant.replace("_", "-"))
    return _VARIANT_RUNS[key]


def real_case_ids() -> set[str]:
    from torch_pitfalls.loader import case_id_of, find_case_files

    return {case_id_of(p) for p in find_case_files(ROOT / "cases")}


def _import_what_checks_import() -> None:
    """An in-process run forgets the modules imported during it, and a planted check's first
    ``torch.testing.assert_close`` imports torch.distributed's functional collectives (2.13),
    which register an operator library that cannot be registered twice: the second run's import
    failed. Imported with this module, before any test's pytester takes its snapshot of the
    modules, they outlive every run (alone, tests/run/test_plugin.py failed)."""
    import torch

    torch.testing.assert_close(torch.tensor(1.0), torch.tensor(1.0))


_import_what_checks_import()


def run_corpus(pytester, *args, inprocess: bool = False):
    """pytest on the planted cases, with the plugin loaded the way the project's conftest does:
    in a fresh interpreter, or (``inprocess``, where only collection and markers matter) in this
    one, which saves an interpreter and torch start per run."""
    run = pytester.runpytest_inprocess if inprocess else pytester.runpytest_subprocess
    return run("-p", "torch_pitfalls.run.plugin", "-p", "no:cacheprovider", "-rs", "cases", *args)


def subprocess_env(**extra: str) -> dict:
    """This environment, able to import the harness, without the caller's own pytest options."""
    env = {k: v for k, v in os.environ.items() if k != "PYTEST_ADDOPTS"}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    return {**env, **extra}


def run_pytest(cwd: Path, *args: str, **env: str) -> subprocess.CompletedProcess:
    """A whole pytest session in a fresh interpreter (for a session-scoped fixture, where
    pytester cannot go), with the plugin loaded as the project's conftest loads it."""
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-p",
        "torch_pitfalls.run.plugin",
        "-p",
        "no:cacheprovider",
        "-p",
        "no:benchmark",
        *args,
    ]
    return subprocess.run(
        cmd, cwd=cwd, env=subprocess_env(**env), capture_output=True, text=True, timeout=stretched(1200)
    )


def outcomes(report: dict) -> dict[tuple[str, str], str]:
    """case × device → outcome, the map two runs of one corpus must agree on."""
    return {(r["case"], r["device"]): r["outcome"] for r in report["records"]}


def differences(expected: dict, got: dict) -> list[str]:
    keys = sorted(expected.keys() | got.keys())
    return [
        f"{c} [{d}]: {expected.get((c, d), 'no record')} -> {got.get((c, d), 'no record')}"
        for c, d in keys
        if expected.get((c, d)) != got.get((c, d))
    ]


# A draw from each global generator (torch's, Python's, NumPy's) that moves none of them: a case
# built on it depends on the global RNG state, and on nothing else, without leaking it.
RNG_DRAW = """\
import random
import numpy
with torch.random.fork_rng(devices=[]):
    t = torch.rand(1).item()
saved = random.getstate()
p = random.random()
random.setstate(saved)
saved = numpy.random.get_state()
n = numpy.random.rand()
numpy.random.set_state(saved)
return int((t + p + n) * 2**20)
"""
RNG_PROBE_BITS = 8  # a run from another RNG state matches all of them once in 256

# A test that moves every global generator and leaves it moved, as any test that shares a session
# with the cases may (`make test` runs tests/ and cases/ together): cases it runs before see
# other generator states, unless the harness reseeds them.
RNG_MOVER = """\
import random

import numpy
import torch


def test_draws_from_every_global_generator():
    torch.rand(1), random.random(), numpy.random.rand()
"""


def reseeded_draw() -> int:
    """What RNG_DRAW gives right after the harness reseeds, drawn here without moving anything."""
    from torch_pitfalls.helpers import reseed
    from torch_pitfalls.run import state

    namespace: dict = {}
    exec("import torch\ndef draw():\n" + textwrap.indent(RNG_DRAW, "    "), namespace)
    before = state.snapshot()
    try:
        reseed()
        return namespace["draw"]()
    finally:
        state.restore(before)


def plant_rng_probes(corpus: Corpus) -> list[str]:
    """Cases ``rng-probe-K``, whose symptom is bit K of RNG_DRAW and whose ``affects`` is what
    that bit is after reseeding: run from any other state, about half of them are mismatches.
    Plus the RNG-moving test beside ``cases/``. Returns the probes' ids."""
    value = reseeded_draw()
    ids = [f"rng-probe-{k}" for k in range(RNG_PROBE_BITS)]
    for k, case_id in enumerate(ids):
        corpus.plant(
            case_id,
            topic="numerics",
            broken=RNG_DRAW,
            symptom=f"return isinstance(run.value, int) and bool(run.value >> {k} & 1)",
            affects="'*'" if value >> k & 1 else "'<1.0'",
        )
    (corpus.root / "test_moves_rng.py").write_text(RNG_MOVER)
    return ids


# Where a planted report "ran": every field a report's schema requires (harness/run/provenance.py).
REPORT_ENV = {
    "torch_cuda": None,
    "torch_git": None,
    "python": "3.11.7",
    "platform": "Linux",
    "devices": {"cpu": "a CPU"},
    "provenance": {
        "python": {"version": "3.11.7", "implementation": "CPython"},
        "os": {"system": "Linux", "release": "6", "machine": "x86_64", "libc": None},
        "cpu": {"model": "a CPU", "count": 2},
        "numpy": None,
        "accelerator": None,
        "torch": {
            "version": "0",
            "git": None,
            "cuda": None,
            "hip": None,
            "install": {"version": None, "wheel_tags": [], "installer": None, "source": None},
        },
    },
}


def case_sha(corpus: Corpus, case_id: str, topic: str = "autograd") -> str:
    """The hash a record of a planted case carries (torch_pitfalls.loader.source_sha256 of its text)."""
    import hashlib

    return hashlib.sha256((corpus.cases / topic / f"{case_id.replace('-', '_')}.py").read_bytes()).hexdigest()


# --- the docs site of `make test`: a sample of the corpus ------------------------------------------
# `make test` builds the docs site (both editions, every page kind) from a sample project, not from
# the whole corpus: its cost then stays flat as cases are added. The whole site of the real corpus
# is `make docs`'s; `make docs-check` runs tests/docs again on it (PITFALLS_SITE=build/site), and CI runs both.
# The sample: the start page's ten, every case the docs tests name (a case id, or its file name, in
# tests/docs/*.py: a test that needs a case names it, and the sample has it), and one case of every
# topic folder (the first by file name, where the others leave the topic without one).
DOCS_TESTS = ROOT / "tests" / "docs"
_NAMED = re.compile(r"\b[a-z0-9]+(?:-[a-z0-9]+)+\b|\b([a-z0-9]+(?:_[a-z0-9]+)+)\.(?:py|ipynb)\b")


def cases_named_in(paths, case_ids: set[str]) -> set[str]:
    """The case ids ``paths`` name: as an id (``backward-twice``) or a file name (``backward_twice.py``)."""
    found = set()
    for path in paths:
        for m in _NAMED.finditer(Path(path).read_text(encoding="utf-8")):
            found.add(m[1].replace("_", "-") if m[1] else m[0])
    return found & case_ids


def site_sample_ids() -> list[str]:
    """The ids of the cases the sample's site is built from (sorted)."""
    from docs.site.start_page import TEN
    from torch_pitfalls.loader import case_id_of, find_case_files

    files = find_case_files(ROOT / "cases")
    topic_of = {case_id_of(p): p.parent.name for p in files}
    chosen = (set(TEN) & set(topic_of)) | cases_named_in(sorted(DOCS_TESTS.glob("*.py")), set(topic_of))
    for path in files:  # in file order: the first of each topic still without a case
        if not any(topic_of[c] == path.parent.name for c in chosen):
            chosen.add(case_id_of(path))
    return sorted(chosen)


def plant_site_sample(root: Path) -> list[str]:
    """A project under ``root`` that ``python -m docs.site.build --root ROOT`` builds a site from: the
    sample's cases (copies of the real files, with the corpus's catalogue), a copy of the recorded
    reports (the matrix, the lint bench, the watcher's proofs: records of the other cases are read
    and left aside) and of build/bench.json where there is one. Returns the sample's ids."""
    from torch_pitfalls.loader import case_id_of, find_case_files

    ids = site_sample_ids()
    for path in find_case_files(ROOT / "cases"):
        if case_id_of(path) in ids:
            (root / "cases" / path.parent.name).mkdir(parents=True, exist_ok=True)
            shutil.copy(path, root / "cases" / path.parent.name / path.name)
    for name in ("catalogue.csv", "__init__.py"):
        shutil.copy(ROOT / "cases" / name, root / "cases" / name)
    (root / "reports").mkdir()
    for path in (ROOT / "reports").iterdir():  # the records, not what a run in progress leaves beside them
        if path.is_file():
            shutil.copy(path, root / "reports" / path.name)
    if (ROOT / "build" / "bench.json").is_file():
        (root / "build").mkdir()
        shutil.copy(ROOT / "build" / "bench.json", root / "build" / "bench.json")
    return ids
