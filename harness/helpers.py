"""Small helpers that case modules share, so no case copies another's plumbing."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from collections import Counter
from contextlib import contextmanager

import torch

try:
    import numpy
except ImportError:
    numpy = None


def reseed(seed: int = 0) -> None:
    """Put every global RNG in a known state, so no case depends on the order of the run."""
    torch.manual_seed(seed)  # seeds every CUDA device too
    random.seed(seed)
    if numpy is not None:
        numpy.random.seed(seed)


@contextmanager
def seeded(seed: int = 0):
    """Seed torch (CPU and any initialised CUDA device), ``random`` and NumPy inside the block,
    and give every global RNG back its previous state afterwards: deterministic, and no leak."""
    cuda = [torch.cuda.current_device()] if torch.cuda.is_initialized() else []
    py_state = random.getstate()
    np_state = numpy.random.get_state() if numpy is not None else None
    with torch.random.fork_rng(devices=cuda):
        reseed(seed)
        try:
            yield
        finally:
            random.setstate(py_state)
            if numpy is not None:
                numpy.random.set_state(np_state)


def ops_called(fn, *args, **kwargs) -> tuple[object, Counter]:
    """Run ``fn`` under ``torch.profiler`` and count the aten ops it dispatched, by name.

    Returns ``(fn's result, Counter of op names)``: a mechanism (a copy, one op instead of N)
    checked as a count, never as a time.
    """
    from torch.profiler import ProfilerActivity, profile

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        result = fn(*args, **kwargs)
    return result, Counter(evt.name for evt in prof.events() if evt.name.startswith("aten::"))


def saved_bytes(fn, *args, **kwargs) -> tuple[object, int]:
    """Run ``fn`` and count the bytes autograd saved for backward while it ran.

    Returns ``(fn's result, bytes)``: the activations a graph holds on to, as a number that does
    not depend on timing or on the allocator (0 under ``torch.no_grad()``).
    """
    total = 0

    def pack(t):
        nonlocal total
        total += t.numel() * t.element_size()
        return t

    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        result = fn(*args, **kwargs)
    return result, total


def run_python(code: str, cwd: str | os.PathLike | None = None, timeout: float = 60.0) -> subprocess.CompletedProcess:
    """Run ``code`` in a fresh interpreter (this one's), capturing its output as text.

    For pitfalls about the Python environment itself (a shadowed module, a reload, argv in a
    notebook, a keyword): they are reproduced there, never by breaking the running process.
    ``cwd`` is where it runs (use a ``tempfile.TemporaryDirectory()``); the child sees the same
    ``sys.path`` entries as this process, so it can import torch and the harness.
    """
    (done,) = run_pythons([code], cwd=cwd, timeout=timeout)
    return done


# -- waiting for a child process ----------------------------------------------------------------
# A wall-clock limit only guards against a hang; it must never decide an outcome because the
# machine was busy. A limit is a base (what the work needs on a quiet machine, with room) times how
# crowded the machine is (the one-minute load average per core, at least 1), re-read while waiting.
# One that still runs out raises subprocess.TimeoutExpired, which the runner reports as the
# machine's timeout, never as a case's symptom.

POLL_S = 1.0  # how often a wait re-reads the load


def crowding() -> float:
    """Runnable processes per core over the last minute, at least 1 (1: a quiet machine)."""
    try:
        load = os.getloadavg()[0]
    except (AttributeError, OSError):  # no load average on this platform: assume quiet
        return 1.0
    return max(1.0, load / (os.cpu_count() or 1))


class Deadline:
    """A base limit that stretches by the most crowding seen since it started."""

    def __init__(self, base_s: float):
        self.base_s, self.started, self.factor = base_s, time.monotonic(), crowding()

    def remaining(self) -> float:
        self.factor = max(self.factor, crowding())
        return self.started + self.base_s * self.factor - time.monotonic()

    def describe(self) -> str:
        """What ran out, in words that do not depend on the load (records compare them)."""
        return f"past its {self.base_s:g} s time limit (stretched with the machine's load)"


def stretched(seconds: float) -> float:
    """A limit for work starting now: ``seconds`` on a quiet machine, times how crowded it is now
    (for a call that takes its limit once, such as ``subprocess.run(timeout=...)``)."""
    return seconds * crowding()


def communicate(proc: subprocess.Popen, base_s: float) -> tuple[str, str]:
    """``proc.communicate()`` within a stretched limit; past it the process is killed and
    ``subprocess.TimeoutExpired`` raised, its message naming the machine's load."""
    deadline = Deadline(base_s)
    while True:
        left = deadline.remaining()
        if left <= 0:
            proc.kill()
            proc.communicate()
            raise subprocess.TimeoutExpired(proc.args, base_s, output=deadline.describe())
        try:
            return proc.communicate(timeout=min(left, POLL_S))
        except subprocess.TimeoutExpired:
            continue


def run_pythons(
    codes: list[str], cwd: str | os.PathLike | None = None, timeout: float = 60.0
) -> list[subprocess.CompletedProcess]:
    """``run_python`` for several snippets at once, each in its own fresh interpreter, started
    together (a case that compares two fresh runs waits for one interpreter start, not two).
    ``timeout`` is what the snippets need on a quiet machine, with room; it stretches with the
    machine's load (``communicate``), so a crowded machine gives a slow run, not a timeout."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", code], cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        for code in codes
    ]
    done = []
    try:
        for proc in procs:
            out, err = communicate(proc, timeout)
            done.append(subprocess.CompletedProcess(proc.args, proc.returncode, out, err))
    finally:
        for proc in procs:  # a timeout or an interrupt leaves no interpreter behind
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return done
