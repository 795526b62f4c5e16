"""Running one case on one device and deciding its outcome.

A case runs in two steps, each in a clean, guarded state: the broken variant (then its symptom
predicate) and the fixed variant. A fix is proven, not trusted: the symptom predicate is asked of
the fixed run too and must say no, and the case's ``check`` (the fix's independent assertion,
kept apart from its computation) must accept the fixed result and reject the broken one. Where
nothing can tell the two apart here (the symptom needs another device, another torch, a module
that is missing), the outcome is ``unverified`` with the reason, never a pass. Cases that may crash or poison the process on a device
(``Case.isolate``) run each step in its own subprocess (``torch_pitfalls.run.worker``), so a crash, a
poisoned CUDA context or a hang is an ``error`` outcome and the run goes on.
"""

from __future__ import annotations

import faulthandler
import importlib
import importlib.util
import io
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import asdict, dataclass
from pathlib import Path

from torch_pitfalls.helpers import Deadline, communicate, reseed
from torch_pitfalls.loader import LoadedCase, LoadError, case_id_of
from torch_pitfalls.observation import CaseTimeout, first_line, observe_within
from torch_pitfalls.run import state
from torch_pitfalls.run.devices import device_unavailable_reason, torch_version
from torch_pitfalls.run.fingerprint import fingerprint
from torch_pitfalls.run.report import Record

# An in-process hang inside C code cannot be interrupted by SIGALRM; past this many extra
# seconds faulthandler dumps every thread's stack and ends the process, so no run hangs forever.
BACKSTOP_S = 30.0
# Allowance for an isolated worker to start Python and import torch before its case runs
# (the worker enforces the case's own time limit itself; this bounds a worker stuck in C code).
WORKER_STARTUP_S = float(os.environ.get("PITFALLS_WORKER_STARTUP_S", "60"))
PROJECT_ROOT = Path(__file__).resolve().parents[2]
OUTPUT_KEPT = 4096  # characters of a variant's printed output kept; the rest is only counted
LISTED_FILES = 5  # files named when a variant leaves files behind


class VariantFailure(Exception):
    """The harness could not get a verdict from a variant: a leak, a timeout, a broken predicate."""


@dataclass
class BrokenResult:
    observed: bool
    form: str | None
    summary: str
    check_rejects: bool = True  # the fix's check said no to this (broken) result
    check_note: str = ""  # why it said no, or that it said yes
    fingerprint: dict | None = None
    # This result judged as a fix would be (``as_fix``): what a copy of the case whose ``fixed``
    # calls ``broken`` gets, without running the broken code a second time.
    as_fix_ok: bool = False
    as_fix_problem: str = ""


@dataclass
class FixedResult:
    ok: bool
    summary: str
    problem: str = ""
    fingerprint: dict | None = None


@contextmanager
def time_limit(seconds: float):
    """Raise CaseTimeout into the code if it runs past ``seconds`` stretched by the machine's load
    (``helpers.Deadline``: re-read each time the alarm rings), main thread only."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return
    deadline = Deadline(seconds)

    def arm(left: float) -> None:
        signal.setitimer(signal.ITIMER_REAL, left)
        try:  # the real stderr: sys.stderr may be a capture without a file descriptor
            # the backstop stretches too, so an isolated worker's parent (whose limit is the case's
            # plus the worker's start, stretched alike) always kills a hang before it fires
            faulthandler.dump_traceback_later(left + BACKSTOP_S * deadline.factor, exit=True, file=sys.__stderr__)
        except (AttributeError, ValueError, OSError):  # no usable stderr at all: SIGALRM alone
            pass

    def on_alarm(signum, frame):
        left = deadline.remaining()
        if left > 0:  # the machine got busier since: wait on
            arm(left)
            return
        raise CaseTimeout(f"ran {deadline.describe()}")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    arm(deadline.remaining())
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        faulthandler.cancel_dump_traceback_later()


@contextmanager
def guarded(leaked: list[str]):
    """Compare every global probe before and after; name what changed, then put it back.

    The variant runs in an empty scratch folder as its working directory, so a file it writes
    there cannot clobber one of the user's, and a file it leaves behind is a leak by name
    (removed with the folder). Never a listing of the user's own folder: another process may
    write there at any time, and removing its files would be worse than the leak.
    """
    home = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="pitfalls-cwd-") as scratch:
        os.chdir(scratch)
        try:
            before = state.snapshot()
            try:
                yield
            finally:
                leaked.extend(state.leaks(before))
                state.restore(before)
                left = sorted(os.listdir(scratch))
                if left:
                    leaked.append(f"files left in the working directory ({_names(left)})")
        finally:
            os.chdir(home)


def _names(names: list[str]) -> str:
    more = len(names) - LISTED_FILES
    return ", ".join(names[:LISTED_FILES]) + (f" and {more} more" if more > 0 else "")


class BoundedText(io.TextIOBase):
    """A text stream that keeps the first ``limit`` characters written to it and counts all."""

    def __init__(self, limit: int = OUTPUT_KEPT):
        self.limit, self.kept, self.chars = limit, [], 0

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):  # as sys.stdout refuses bytes
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        room = self.limit - min(self.chars, self.limit)
        if room:
            self.kept.append(text[:room])
        self.chars += len(text)
        return len(text)

    def getvalue(self) -> str:
        return "".join(self.kept)


@contextmanager
def contained(leaked: list[str], printed: BoundedText):
    """A variant's surroundings: guarded global state, and its prints (Python's stdout and
    stderr) caught, so a case that prints a megabyte floods neither the terminal nor a report."""
    with guarded(leaked), redirect_stdout(printed), redirect_stderr(printed):
        yield


def run_variant(fn, device: str, timeout: float, label: str):
    reseed()
    leaked: list[str] = []
    printed = BoundedText()
    try:
        with time_limit(timeout):
            obs = observe_within(contained(leaked, printed), fn, device)
    except CaseTimeout as exc:
        raise VariantFailure(f"{label} variant {exc}") from None
    except subprocess.TimeoutExpired as exc:
        raise VariantFailure(
            f"{label} variant: the machine timed out, not the case: a process it started ran "
            f"{exc.output or f'past its {exc.timeout:g} s time limit'}"
        ) from None
    if leaked:
        raise VariantFailure(f"{label} variant leaked global state: {', '.join(leaked)}")
    obs.output, obs.output_chars = printed.getvalue(), printed.chars
    return obs


def _symptom(lc: LoadedCase, obs, label: str):
    try:
        return lc.module.symptom(obs)
    except Exception as exc:
        raise VariantFailure(
            f"symptom predicate raised {type(exc).__name__} on the {label} run: {exc} ({label} {obs.summary()})"
        ) from None


def judge(lc: LoadedCase, obs, device: str) -> tuple[bool, str]:
    """Whether the case's ``check`` accepts a result, and its words. A result that is an
    exception is refused without asking (a fix raises nothing); ``False`` or any exception from
    the check is a refusal. The check runs guarded like a variant: it may not leak state."""
    if obs.error is not None:
        return False, f"the run raised {type(obs.error).__name__}"
    leaked: list[str] = []
    try:
        with time_limit(lc.case.timeout), contained(leaked, BoundedText()):
            verdict = lc.module.check(obs, device)
    except CaseTimeout as exc:
        raise VariantFailure(f"check {exc}") from None
    except Exception as exc:
        return False, f"{type(exc).__name__}: {first_line(str(exc), 200)}".rstrip(": ")
    if leaked:
        raise VariantFailure(f"check leaked global state: {', '.join(leaked)}")
    if verdict is False:
        return False, "check returned False"
    return True, "accepted"


def _stable(lc: LoadedCase):
    return getattr(lc.module, "stable", None)


def as_fix(obs, fp, symptom_seen: bool, accepted: bool, note: str) -> FixedResult:
    """A run judged as a fix: it raises nothing, warns nothing, shows no symptom, and the case's
    check accepts it. The one judgement of a fix, for the fixed run and for the broken run alike."""
    if obs.error is not None:
        return FixedResult(False, obs.summary(), "the fixed variant raised", fp)
    if obs.warnings:
        return FixedResult(False, obs.summary(), "the fixed variant emitted a warning", fp)
    if symptom_seen:
        return FixedResult(False, obs.summary(), "the fixed variant shows the symptom", fp)
    if not accepted:
        return FixedResult(False, obs.summary(), f"the fix's check rejects the fixed result ({note})", fp)
    return FixedResult(True, obs.summary(), "", fp)


def broken_step(lc: LoadedCase, device: str) -> BrokenResult:
    obs = run_variant(lc.module.broken, device, lc.case.timeout, "broken")
    verdict = _symptom(lc, obs, "broken")
    accepted, note = judge(lc, obs, device)
    form = verdict if isinstance(verdict, str) else None
    fp = fingerprint(obs, _stable(lc))
    judged = as_fix(obs, fp, bool(verdict), accepted, note)
    return BrokenResult(
        observed=bool(verdict),
        form=form,
        summary=obs.summary(),
        check_rejects=not accepted,
        check_note=note,
        fingerprint=fp,
        as_fix_ok=judged.ok,
        as_fix_problem=judged.problem,
    )


def fixed_step(lc: LoadedCase, device: str) -> FixedResult:
    obs = run_variant(lc.module.fixed, device, lc.case.timeout, "fixed")
    fp = fingerprint(obs, _stable(lc))
    seen, accepted, note = False, False, ""
    if obs.error is None and not obs.warnings:  # asked only of a run that raised and warned nothing
        seen = bool(_symptom(lc, obs, "fixed"))
        if not seen:
            accepted, note = judge(lc, obs, device)
    return as_fix(obs, fp, seen, accepted, note)


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
    if not broken.check_rejects:
        if rule is not None:  # the symptom shows, yet the check cannot tell: the check is too weak
            return "fix-failed", "the fix is not proven: its check accepts the broken result too"
        # Before an upgrade's change the broken code is the old, correct spelling: absent, as
        # observed; the fix is proven in the releases where the symptom shows (the matrix).
        before = case.outside_observed_change(version, device)
        if before:
            return "absent", f"{before}; the fix is proven where the symptom shows"
        return (
            "unverified",
            f"{not_here(case, version, device)}, and the broken result passes the fix's check: nothing here tells the fix from the broken code",
        )
    if rule is None:
        return "absent", ""
    return "reproduced", " — ".join(x for x in (rule.reason, rule.issue, rule.proxy and f"proxy: {rule.proxy}") if x)


def not_here(case, version: str, device: str) -> str:
    """Why the symptom is not expected in this cell, in words."""
    if device not in case.devices:
        return f"the symptom needs {' or '.join(case.devices)}; this is {device}"
    return f"the symptom is not expected on torch {version} (affects {case.affects_text})"


def missing_requirement(lc: LoadedCase) -> str | None:
    """Why this environment cannot check the case at all: a module it needs is not installed,
    or is installed but does not import here (e.g. a torchvision built for another torch)."""
    problems = []
    for name in lc.case.requires:
        if importlib.util.find_spec(name) is None:
            problems.append(f"{name}, which is not installed")
            continue
        try:
            importlib.import_module(name)
        except Exception as exc:  # a broken install is this environment's fault, not the case's
            problems.append(f"{name}, which does not import here ({type(exc).__name__}: {first_line(str(exc), 160)})")
    if problems:
        return f"needs {'; '.join(problems)}: nothing here checks the claim"
    return None


def not_run_reason(lc: LoadedCase, device: str) -> str | None:
    """Why the harness would not run this case's variants here at all (the device is missing:
    ``skipped``; a required module is: ``unverified``), or None when it would."""
    return device_unavailable_reason(device) or missing_requirement(lc)


def run_case(lc: LoadedCase, device: str, version: str | None = None) -> Record:
    version = version or torch_version()
    case = lc.case
    record = Record(
        case=case.id,
        topic=lc.topic,
        kind=case.kind,
        device=device,
        outcome="error",
        expected=case.expected(version, device),
        observed=None,
        isolated=device in case.isolate,
        source_sha256=lc.source_sha256,
    )
    reason = device_unavailable_reason(device)
    if case.device_independent and device != "cpu":
        reason = "device-independent: its variants never use the device; the cpu run stands for every device"
    if reason:
        record.outcome, record.detail = "skipped", reason
        return record
    reason = missing_requirement(lc)
    if reason:
        record.outcome, record.detail = "unverified", reason
        return record
    started = time.perf_counter()
    step = _in_subprocess if record.isolated else _in_process
    try:
        broken = step(lc, device, "broken")
        record.observed, record.form, record.broken = broken.observed, broken.form, broken.summary
        record.check = ("rejects" if broken.check_rejects else "accepts") + f" the broken result: {broken.check_note}"
        record.fingerprints = {"broken": broken.fingerprint}
        # The mutation check: the outcome a copy whose fix calls the broken code would get.
        mutant = FixedResult(broken.as_fix_ok, broken.summary, broken.as_fix_problem, broken.fingerprint)
        record.mutant = decide(lc, device, version, broken, mutant)[0]
        fixed = step(lc, device, "fixed")
        record.fixed = fixed.summary
        record.fingerprints["fixed"] = fixed.fingerprint
        record.outcome, record.detail = decide(lc, device, version, broken, fixed)
    except VariantFailure as exc:
        record.outcome, record.detail = "error", str(exc)
    record.duration_s = round(time.perf_counter() - started, 4)
    return record


def load_error_record(err: LoadError) -> Record:
    """A case file that cannot be loaded, as an ``error`` of the run on no device ("-")."""
    path = Path(err.path)
    return Record(
        case=case_id_of(path),
        topic=path.parent.name,
        kind="",
        device="-",
        outcome="error",
        expected=False,
        observed=None,
        detail=err.problem,
    )


def _in_process(lc: LoadedCase, device: str, step: str):
    return broken_step(lc, device) if step == "broken" else fixed_step(lc, device)


def _in_subprocess(lc: LoadedCase, device: str, step: str):
    """Run one step in a fresh interpreter (``torch_pitfalls.run.worker``) and read its result back."""
    limit = lc.case.timeout + WORKER_STARTUP_S
    path = os.pathsep.join(filter(None, [str(PROJECT_ROOT), os.environ.get("PYTHONPATH")]))
    with tempfile.TemporaryDirectory(prefix="pitfalls-worker-") as tmp:
        # The worker's temp files (its scratch working directory too) go in here, and this
        # process removes them even when the worker crashes or is killed.
        env = dict(os.environ, PYTHONPATH=path, TMPDIR=tmp)
        if device == "cpu":
            # A CPU cell is what a machine without a GPU does. Some libraries use a GPU whenever
            # one is visible, whatever device the data is on (DataParallel does): hide them.
            env["CUDA_VISIBLE_DEVICES"] = ""
        out = Path(tmp) / "result.json"
        cmd = [sys.executable, "-m", "torch_pitfalls.run.worker", str(lc.path.resolve()), device, step, str(out)]
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp)
        try:
            _, stderr = communicate(child, limit)
        except subprocess.TimeoutExpired as exc:
            raise VariantFailure(f"{step} variant: isolated run killed: the machine timed out, {exc.output}") from None
        proc = subprocess.CompletedProcess(cmd, child.returncode, "", stderr)
        if proc.returncode < 0:
            name = signal.Signals(-proc.returncode).name
            raise VariantFailure(f"{step} variant: isolated run crashed ({name}){_tail(proc.stderr)}")
        if not out.exists():
            raise VariantFailure(
                f"{step} variant: isolated run exited with status {proc.returncode}{_tail(proc.stderr)}"
            )
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
