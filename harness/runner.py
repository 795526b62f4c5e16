"""Running one case on one device and deciding its outcome.

A case runs in two steps, each in a clean, guarded state: the broken variant (then its symptom
predicate) and the fixed variant. Cases that may crash or poison the process on a device
(``Case.isolate``) run each step in its own subprocess (``harness.worker``), so a crash, a
poisoned CUDA context or a hang is an ``error`` outcome and the run goes on.
"""
from __future__ import annotations

import faulthandler
import importlib.util
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

from harness import state
from harness.loader import LoadedCase
from harness.observe import CaseTimeout, observe_within
from harness.report import Record
from harness.versions import device_unavailable_reason, torch_version

# An in-process hang inside C code cannot be interrupted by SIGALRM; past this many extra
# seconds faulthandler dumps every thread's stack and ends the process, so no run hangs forever.
BACKSTOP_S = 30.0
# Allowance for an isolated worker to start Python and import torch before its case runs
# (the worker enforces the case's own time limit itself; this bounds a worker stuck in C code).
WORKER_STARTUP_S = float(os.environ.get("PITFALLS_WORKER_STARTUP_S", "60"))
PROJECT_ROOT = Path(__file__).resolve().parent.parent


class VariantFailure(Exception):
    """The harness could not get a verdict from a variant: a leak, a timeout, a broken predicate."""


@dataclass
class BrokenResult:
    observed: bool
    form: str | None
    summary: str


@dataclass
class FixedResult:
    ok: bool
    summary: str
    problem: str = ""


@contextmanager
def time_limit(seconds: float):
    """Raise CaseTimeout into the code if it runs longer than ``seconds`` (main thread only)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def on_alarm(signum, frame):
        raise CaseTimeout(f"ran past its {seconds:g} s time limit")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:  # the real stderr: sys.stderr may be a capture without a file descriptor
        faulthandler.dump_traceback_later(seconds + BACKSTOP_S, exit=True, file=sys.__stderr__)
    except (AttributeError, ValueError, OSError):  # no usable stderr at all: SIGALRM alone
        pass
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


@contextmanager
def guarded(leaked: list[str]):
    """Compare every global probe before and after; name what changed, then put it back."""
    before = state.snapshot()
    try:
        yield
    finally:
        leaked.extend(state.leaks(before))
        state.restore(before)


def run_variant(fn, device: str, timeout: float, label: str):
    state.reseed()
    leaked: list[str] = []
    try:
        with time_limit(timeout):
            obs = observe_within(guarded(leaked), fn, device)
    except CaseTimeout as exc:
        raise VariantFailure(f"{label} variant {exc}") from None
    if leaked:
        raise VariantFailure(f"{label} variant leaked global state: {', '.join(leaked)}")
    return obs


def broken_step(lc: LoadedCase, device: str) -> BrokenResult:
    obs = run_variant(lc.module.broken, device, lc.case.timeout, "broken")
    try:
        verdict = lc.module.symptom(obs)
    except Exception as exc:
        raise VariantFailure(f"symptom predicate raised {type(exc).__name__}: {exc} (broken {obs.summary()})") from None
    form = verdict if isinstance(verdict, str) else None
    return BrokenResult(observed=bool(verdict), form=form, summary=obs.summary())


def fixed_step(lc: LoadedCase, device: str) -> FixedResult:
    obs = run_variant(lc.module.fixed, device, lc.case.timeout, "fixed")
    if obs.error is not None:
        return FixedResult(False, obs.summary(), "the fixed variant raised")
    if obs.warnings:
        return FixedResult(False, obs.summary(), "the fixed variant emitted a warning")
    return FixedResult(True, obs.summary())


def decide(lc: LoadedCase, device: str, version: str, broken: BrokenResult, fixed: FixedResult) -> tuple[str, str]:
    """The outcome and a sentence saying why, asserted in both directions."""
    case = lc.case
    rule = case.rule_for(version, device)
    where = f"torch {version} on {device}; affects {case.affects_text!r}, devices {', '.join(case.devices)}"
    if broken.observed and rule is None:
        return "mismatch", f"symptom seen but not expected ({where})"
    if not broken.observed and rule is not None:
        return "mismatch", f"symptom expected but not seen ({where})"
    if rule is not None and rule.form is not None and broken.form != rule.form:
        return "mismatch", f"symptom seen as {broken.form!r}, expected as {rule.form!r} ({where})"
    if not fixed.ok:
        return "fix-failed", f"{fixed.problem}: {fixed.summary}"
    if rule is None:
        return "absent", ""
    return "reproduced", " — ".join(x for x in (rule.reason, rule.issue) if x)


def skip_reason(lc: LoadedCase, device: str) -> str | None:
    reason = device_unavailable_reason(device)
    if reason:
        return reason
    missing = [m for m in lc.case.requires if importlib.util.find_spec(m) is None]
    if missing:
        return f"needs {', '.join(missing)}, which is not installed"
    return None


def run_case(lc: LoadedCase, device: str, version: str | None = None) -> Record:
    version = version or torch_version()
    case = lc.case
    record = Record(
        case=case.id, topic=lc.topic, kind=case.kind, device=device, outcome="error",
        expected=case.expected(version, device), observed=None,
        isolated=device in case.isolate, source_sha256=lc.source_sha256,
    )
    reason = skip_reason(lc, device)
    if reason:
        record.outcome, record.detail = "skipped", reason
        return record
    started = time.perf_counter()
    step = _in_subprocess if record.isolated else _in_process
    try:
        broken = step(lc, device, "broken")
        record.observed, record.form, record.broken = broken.observed, broken.form, broken.summary
        fixed = step(lc, device, "fixed")
        record.fixed = fixed.summary
        record.outcome, record.detail = decide(lc, device, version, broken, fixed)
    except VariantFailure as exc:
        record.outcome, record.detail = "error", str(exc)
    record.duration_s = round(time.perf_counter() - started, 4)
    return record


def _in_process(lc: LoadedCase, device: str, step: str):
    return broken_step(lc, device) if step == "broken" else fixed_step(lc, device)


def _in_subprocess(lc: LoadedCase, device: str, step: str):
    """Run one step in a fresh interpreter (``harness.worker``) and read its result back."""
    limit = lc.case.timeout + WORKER_STARTUP_S
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")])))
    with tempfile.TemporaryDirectory(prefix="pitfalls-worker-") as tmp:
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "harness.worker", str(lc.path.resolve()), device, step, str(out)]
        try:
            proc = subprocess.run(cmd, capture_output=True, text=True, timeout=limit, env=env, cwd=tmp)
        except subprocess.TimeoutExpired:
            raise VariantFailure(f"{step} variant: isolated run killed after {limit:g} s (time limit)") from None
        if proc.returncode < 0:
            name = signal.Signals(-proc.returncode).name
            raise VariantFailure(f"{step} variant: isolated run crashed ({name}){_tail(proc.stderr)}")
        if not out.exists():
            raise VariantFailure(f"{step} variant: isolated run exited with status {proc.returncode}{_tail(proc.stderr)}")
        data = json.loads(out.read_text())
    if "failure" in data:
        raise VariantFailure(data["failure"])
    return BrokenResult(**data) if step == "broken" else FixedResult(**data)


def _tail(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    return f": {lines[-1][:200]}" if lines else ""


def step_result_json(lc: LoadedCase, device: str, step: str) -> dict:
    """What a worker writes back: the step's result, or the failure that stopped it."""
    try:
        return asdict(_in_process(lc, device, step))
    except VariantFailure as exc:
        return {"failure": str(exc)}
