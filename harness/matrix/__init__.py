"""The version matrix: recorded reports merged into case × torch version → what was observed.

Nothing here runs a case. A cell is a record of a report in ``reports/`` (read only through
``load_report``, so only whole, schema-valid reports count), judged against the case module as
it is now: a record made from an older text of the case is ``stale``; a cell with no record is
``not observed``. What changed between releases is derived from the cells, never typed by hand.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from pathlib import Path

from packaging.version import Version

from torch_pitfalls.loader import case_id_of, find_case_files, source_sha256
from torch_pitfalls.matrix.changes import Change, between
from torch_pitfalls.run.report import FAILING, PASSING, Record, ReportError, load_report, records_of
from torch_pitfalls.versions import release_of

# The newest patch release of every minor from 1.13 to 2.15 (PyPI, checked 2026-11-23).
DEFAULT_VERSIONS = (
    "1.13.1",
    "2.0.1",
    "2.1.2",
    "2.2.2",
    "2.3.1",
    "2.4.1",
    "2.5.1",
    "2.6.0",
    "2.7.1",
    "2.8.0",
    "2.9.1",
    "2.10.0",
    "2.11.0",
    "2.12.1",
    "2.13.0",
    "2.14.1",
    "2.15.0",
)
STALE, NOT_OBSERVED = "stale", "not observed"
# A device-independent case's cell on another device: its cpu run stands for it; no record there
# counts (a CUDA "reproduction" of a case that never uses the device would be a cpu run counted twice).
DEVICE_INDEPENDENT = "device-independent"
# torch-2.6.0-cpu.json: this project's own runs; torch-2.11.0-cuda-nvidia-h100-80gb-hbm3.json: a
# contributed run (`pitfalls import-report`), whose column is the device kind and its model.
REPORT_NAME = re.compile(
    r"^torch-(?P<version>\d+\.\d+\.\d+)-(?P<device>[a-z]+)(?:-(?P<model>[a-z0-9]+(?:-[a-z0-9]+)*))?\.json$"
)


def device_label(kind: str, model: str | None = None) -> str:
    """A matrix column's device: ``cpu`` for this project's runs, ``cuda:<model>`` contributed."""
    return f"{kind}:{model}" if model else kind


def device_kind(label: str) -> str:
    return label.split(":", 1)[0]


def report_path(reports: str | Path, version: str, device: str) -> Path:
    kind, _, model = device.partition(":")
    return Path(reports) / f"torch-{version}-{kind}{'-' + model if model else ''}.json"


@dataclass(frozen=True)
class CaseSource:
    """A case as the matrix needs it: its id, topic and the hash of its text (no import)."""

    id: str
    topic: str
    sha256: str
    path: Path | None = field(default=None, compare=False)  # its file, read only when a fact is asked

    @property
    def device_independent(self) -> bool:
        """Its cpu run stands for every device: no other device records it (read on first ask: the
        cpu lane, which most readers of the matrix want, never parses a case file)."""
        return self.path is not None and _device_independent(self.path)


@dataclass(frozen=True)
class Cell:
    case: str
    version: str
    device: str
    status: str  # an outcome, STALE or NOT_OBSERVED
    record: Record | None = None

    @property
    def observed(self) -> bool | None:
        """The symptom was seen, from a fresh record; None when nothing fresh says."""
        fresh = self.status not in (STALE, NOT_OBSERVED, DEVICE_INDEPENDENT)
        return self.record.observed if fresh and self.record else None

    @property
    def form(self) -> str | None:
        return self.record.form if self.observed else None


@dataclass
class Matrix:
    cases: list[CaseSource]
    versions: list[str]
    devices: list[str]
    reports: dict[tuple[str, str], Path]  # (version, device) -> report file
    provenance: dict[tuple[str, str], dict | None] = field(default_factory=dict)  # (version, device) -> where it ran
    _records: dict[tuple[str, str, str], Record] = field(default_factory=dict)  # (case, version, device)
    unknown: list[tuple[Path, str]] = field(default_factory=list)  # records of ids no case declares
    _histories: dict[tuple[str, str], tuple[Change, ...]] = field(default_factory=dict, repr=False)

    def cell(self, case: str, version: str, device: str = "cpu") -> Cell:
        if device != "cpu" and self._source[case].device_independent:
            return Cell(case, version, device, DEVICE_INDEPENDENT)  # whatever an old record says
        record = self._records.get((case, version, device))
        if record is None:
            return Cell(case, version, device, NOT_OBSERVED)
        current = self._source[case].sha256
        status = STALE if record.source_sha256 != current else record.outcome
        return Cell(case, version, device, status, record)

    def row(self, case: str, device: str = "cpu") -> list[Cell]:
        return [self.cell(case, v, device) for v in self.versions]

    def changes(self, case: str, device: str = "cpu", start: str | None = None, end: str | None = None) -> list[Change]:
        """Every change a user would see, from one freshly observed release to the next
        (``torch_pitfalls.matrix.changes``), optionally only those first seen in (start, end]."""
        found = self._history(case, device)
        if start is not None:
            found = [c for c in found if Version(c.since) > Version(start)]
        if end is not None:
            found = [c for c in found if Version(c.since) <= Version(end)]
        return list(found)

    def _history(self, case: str, device: str) -> tuple[Change, ...]:
        # The records are fixed once loaded, so a row's history is derived once: the site asks
        # for it per cell and per pair of releases.
        if (case, device) not in self._histories:
            self._histories[case, device] = self._derive_history(case, device)
        return self._histories[case, device]

    def _derive_history(self, case: str, device: str) -> tuple[Change, ...]:
        found, before = [], None
        for cell in self.row(case, device):
            if cell.status in (STALE, NOT_OBSERVED) or cell.record is None or cell.status == "skipped":
                continue
            if cell.record.observed is None and not cell.record.fingerprints:
                continue  # nothing ran there (a missing module): a gap, not a behaviour
            if before is not None:
                step = between(case, device, before.version, cell.version, before.record, cell.record)
                if (
                    cell.observed
                    and before.observed
                    and cell.form != before.form
                    and not any(c.variant == "broken" for c in step)
                ):
                    step.append(
                        Change(
                            case,
                            device,
                            "symptom",
                            "form-changed",
                            cell.version,
                            before.version,
                            str(before.form),
                            str(cell.form),
                        )
                    )
                found.extend(step)
            before = cell
        return tuple(found)

    def portable_fix(self, case: str, device: str, versions: list[str]) -> bool | None:
        """The fixed variant passed on every one of ``versions`` (None: one of them not observed)."""
        cells = [self.cell(case, v, device) for v in versions]
        if any(c.status in (STALE, NOT_OBSERVED, "skipped") for c in cells):
            return None
        return all(c.status in (*PASSING, "unverified") for c in cells)

    @functools.cached_property  # built once, not for each of the cells that read it
    def _source(self) -> dict[str, CaseSource]:
        return {c.id: c for c in self.cases}

    def problems(self) -> dict[str, list[str]]:
        """What `pitfalls matrix --check` lists, per kind."""
        out = {"failing": [], "stale": [], "missing": [], "unknown": []}
        for version, device in sorted(self.reports, key=lambda k: (Version(k[0]), k[1])):
            for c in self.cases:
                cell = self.cell(c.id, version, device)
                where = f"{c.id} [{device}] torch {version}"
                if cell.status == NOT_OBSERVED:
                    out["missing"].append(where)
                elif cell.status == STALE:
                    out["stale"].append(where)
                elif cell.status in FAILING:
                    out["failing"].append(f"{where}: {cell.status}: {cell.record.detail}")
        out["unknown"] = [f"{path}: unknown case id {case!r}" for path, case in self.unknown]
        return out

    def to_json(self) -> dict:
        return {
            "versions": self.versions,
            "devices": self.devices,
            "reports": {f"{v} {d}": str(p) for (v, d), p in self.reports.items()},
            "cases": [
                {
                    "id": c.id,
                    "topic": c.topic,
                    "cells": {
                        d: {
                            cell.version: {"status": cell.status, "observed": cell.observed, "form": cell.form}
                            for cell in self.row(c.id, d)
                        }
                        for d in self.devices
                    },
                    "changes": {d: [ch.to_json() for ch in self.changes(c.id, d)] for d in self.devices},
                }
                for c in self.cases
            ],
            "problems": self.problems(),
        }


@functools.lru_cache(maxsize=None)
def _device_independent(path: Path) -> bool:
    from torch_pitfalls.casefile import CaseFileError, read_case

    try:
        return read_case(path).fact("device_independent") is True
    except CaseFileError:
        return False  # the loader says what is wrong with it


def case_sources(cases_dir: str | Path) -> list[CaseSource]:
    """The current cases, by file: the loader requires ``<id with underscores>.py``."""
    return [
        CaseSource(case_id_of(p), p.parent.name, source_sha256(p.read_bytes()), p)
        for p in find_case_files(Path(cases_dir))
    ]


def default_reports_dir(cases_dir: str | Path) -> Path:
    """The recorded reports beside the cases folder: ``./reports`` in a checkout, and in an
    installed harness the matrix shipped with it (the wheel holds ``harness/cases`` and
    ``harness/reports``), so ``pitfalls matrix`` and ``upgrade`` work from any folder."""
    return Path(cases_dir).parent / "reports"


def load_matrix(reports_dir: str | Path = "reports", cases_dir: str | Path = "cases", schema: bool = True) -> Matrix:
    """Every ``torch-<version>-<device>.json`` under ``reports_dir``, validated; a bad one raises
    ReportError naming the file. ``schema=False``: see ``load_report``."""
    cases = case_sources(cases_dir)
    known = {c.id for c in cases}
    reports_dir = Path(reports_dir)
    if not reports_dir.is_dir():
        raise ReportError(reports_dir, "no such reports folder")
    matrix = Matrix(cases, [], [], {})
    for path in sorted(reports_dir.glob("torch-*.json")):
        name = REPORT_NAME.match(path.name)
        if not name:
            raise ReportError(path, "a report's name must be torch-<X.Y.Z>-<device>[-<model>].json")
        version, kind = name["version"], name["device"]
        device = device_label(kind, name["model"])
        report = load_report(path, schema=schema)
        if release_of(report["torch"]) != Version(version):
            raise ReportError(path, f"its name says torch {version}, but it was recorded on torch {report['torch']}")
        matrix.reports[version, device] = path
        matrix.provenance[version, device] = report.get("provenance")
        for r in records_of(report):
            if r.device != kind:
                continue  # a run of every device also records the ones it skipped
            if r.case not in known:
                matrix.unknown.append((path, r.case))
                continue
            matrix._records[r.case, version, device] = r
    matrix.versions = sorted({v for v, _ in matrix.reports}, key=Version)
    matrix.devices = sorted({d for _, d in matrix.reports}, key=lambda d: (d != "cpu", d))
    return matrix
