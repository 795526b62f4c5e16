"""The JSON report of a run: one record per case × device, plus where the run happened.

The version matrix, the docs and the CLI read these files; nothing re-runs a case to draw a
table. Files are written to a temp file and renamed, so a reader never sees half a report.
"""

from __future__ import annotations

import datetime as dt
import functools
import json
import os
import platform
import sys
import tempfile
from collections import Counter
from dataclasses import asdict, dataclass
from pathlib import Path

SCHEMA = "torch-pitfalls/report"
SCHEMA_FILE = Path(__file__).with_name("report.schema.json")
SCHEMA_VERSION = 3
# unverified: the cell's claim cannot be checked here (the symptom needs another device, or a
# module is missing, and nothing tells the fix from the broken code): never counted as observed.
OUTCOMES = ("reproduced", "absent", "unverified", "mismatch", "fix-failed", "error", "skipped")
PASSING = ("reproduced", "absent")
FAILING = ("mismatch", "fix-failed", "error")


@dataclass
class Record:
    case: str
    topic: str
    kind: str
    device: str
    outcome: str  # one of OUTCOMES
    expected: bool  # symptom expected here (torch version in `affects`, device in `devices`)
    observed: bool | None  # symptom seen; None when the broken variant did not run to a verdict
    form: str | None = None  # the symptom's form, when the case names forms
    broken: str = ""  # short text of what the broken variant produced
    fixed: str = ""  # short text of what the fixed variant produced
    detail: str = ""  # why: the mismatch, the failure, the skip reason
    duration_s: float = 0.0
    isolated: bool = False
    source_sha256: str = ""
    check: str = ""  # what the fix's check said of the broken result ("rejects …" proves the fix)
    fingerprints: dict | None = None  # {"broken": fp, "fixed": fp}: torch_pitfalls.run.fingerprint
    # The outcome with the fix replaced by the broken code (the broken result judged as a fix);
    # "" where the broken variant gave no verdict. Never a pass for a proven case.
    mutant: str = ""

    @property
    def failed(self) -> bool:
        return self.outcome in FAILING


def environment() -> dict:
    """Where this run happens: torch, Python, platform and device names, and the provenance
    (harness/run/provenance.py) a reader of someone else's report needs to trust a cell."""
    import torch

    from torch_pitfalls.run.devices import device_names
    from torch_pitfalls.run.provenance import provenance

    return {
        "torch": torch.__version__,
        "torch_cuda": torch.version.cuda,
        "torch_git": getattr(torch.version, "git_version", None),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "devices": device_names(),
        "provenance": provenance(),
    }


def build_report(records: list[Record], started: dt.datetime, env: dict | None = None) -> dict:
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        **(env or environment()),
        "started": started.isoformat(timespec="seconds"),
        "finished": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "argv": sys.argv,
        "totals": dict(Counter(r.outcome for r in records)),
        "records": [asdict(r) for r in records],
    }


def write_report(report: dict, path: str | os.PathLike) -> Path:
    """Write atomically; the parent folder is created, as pytest's --junitxml does."""
    path = Path(path)
    if path.exists() and path.is_dir():
        raise OSError(f"{path} is a directory")
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)  # mkstemp makes it private; a report is for everyone to read
        with os.fdopen(fd, "w") as fh:
            json.dump(report, fh, indent=1)
            fh.write("\n")
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


class ReportError(ValueError):
    """A report that cannot be trusted: unreadable, not JSON, not the schema, or inconsistent."""

    def __init__(self, path, problem: str):
        self.path, self.problem = Path(path), problem
        super().__init__(f"{path}: {problem}")


def load_report(path: str | os.PathLike, schema: bool = True) -> dict:
    """Read a report, refusing anything but a whole, valid one: readers never half-read a file.

    Checked: JSON syntax (a truncated file fails here), the JSON Schema kept beside this module,
    and what a schema cannot say: totals that match the records, one record per case × device.
    ``schema=False`` skips the schema alone (most of the time a load takes): for a reader that only
    consults the reports shipped with the harness, which the project's own checks validate, and
    that must start fast (the watcher's explainer, on a user's first warning).
    """
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ReportError(path, f"cannot be read ({exc.__class__.__name__}: {exc})") from None
    try:
        report = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ReportError(path, f"is not valid JSON (truncated?): {exc}") from None
    errors = sorted(_validator().iter_errors(report), key=lambda e: list(e.absolute_path)) if schema else []
    if errors:
        where = "/".join(str(p) for p in errors[0].absolute_path) or "(top level)"
        raise ReportError(path, f"does not match the report schema at {where}: {errors[0].message}")
    counted = Counter(r["outcome"] for r in report["records"])
    if counted != Counter(report["totals"]):
        raise ReportError(path, f"totals {report['totals']} do not match its records {dict(counted)}")
    seen = Counter((r["case"], r["device"]) for r in report["records"])
    twice = [f"{c} [{d}]" for (c, d), n in seen.items() if n > 1]
    if twice:
        raise ReportError(path, f"has more than one record for {', '.join(twice)}")
    return report


def records_of(report: dict) -> list[Record]:
    return [Record(**r) for r in report["records"]]


@functools.lru_cache(maxsize=1)
def _validator():
    """The schema's validator, built once per process (building it costs as much as a validation)."""
    import jsonschema

    schema = json.loads(SCHEMA_FILE.read_text(encoding="utf-8"))
    return jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())


def summary_table(records: list[Record]) -> str:
    """Case × device → outcome, and a line of totals."""
    devices = sorted({r.device for r in records}, key=lambda d: (d != "cpu", d))
    cases = list(dict.fromkeys(r.case for r in records))
    cell = {(r.case, r.device): r.outcome for r in records}
    width = max([len("case"), *map(len, cases)])
    cols = [max(len(d), max((len(cell.get((c, d), "")) for c in cases), default=0)) for d in devices]
    lines = ["  ".join(["case".ljust(width), *(d.ljust(w) for d, w in zip(devices, cols))]).rstrip()]
    lines.append("  ".join(["-" * width, *("-" * w for w in cols)]))
    for c in cases:
        lines.append(
            "  ".join([c.ljust(width), *(cell.get((c, d), "-").ljust(w) for d, w in zip(devices, cols))]).rstrip()
        )
    totals = Counter(r.outcome for r in records)
    lines.append(
        f"{len(records)} runs of {len(cases)} cases: " + ", ".join(f"{totals[o]} {o}" for o in OUTCOMES if totals[o])
    )
    observed = sum(totals[o] for o in PASSING)
    lines.append(
        f"observed and proven: {observed}; unverified here: {totals['unverified']}; "
        f"not run (skipped): {totals['skipped']}"
    )
    return "\n".join(lines)
