"""Work shared with a forked copy of this process: ``for_each(items, work, processes)``.

The docs build executes 116 case modules one after another in its own process (each needs the
process's ``__main__``, working directory and captured streams to itself), and writes each case's
pages from the result: most of the build's time before Sphinx starts, on one core of two. Forking
shares that work without sharing any state: the copy has the cases loaded and torch imported, takes
the next item from a counter both processes hold, and writes its items' files itself, so nothing but
a failure's message comes back.

Forking is used only where it is safe: on a platform with ``fork``, and before CUDA is initialised in
this process (a forked child cannot use it). Elsewhere, and with ``processes=1``, the items run here,
in order.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import sys
from typing import Callable, Sequence, TypeVar

T = TypeVar("T")


class ForkedFailure(Exception):
    """The forked copy failed: its exception's message, or how it died."""


def can_fork() -> bool:
    if not hasattr(os, "fork") or sys.platform != "linux":
        return False
    torch = sys.modules.get("torch")
    return not (torch is not None and torch.cuda.is_initialized())


def for_each(items: Sequence[T], work: Callable[[T], object], processes: int = 2) -> None:
    """``work(item)`` for every item, once, shared between this process and ``processes - 1``
    forked copies (at most one copy: the build has one case runner per process). The first
    failure is raised here: this process's own, or a copy's as ``ForkedFailure``."""
    if processes < 2 or len(items) < 2 or not can_fork():
        for item in items:
            work(item)
        return
    counter = multiprocessing.get_context("fork").Value("i", 0)

    def take() -> int:
        with counter.get_lock():
            index = counter.value
            counter.value += 1
        return index

    def run_share() -> None:
        while (index := take()) < len(items):
            work(items[index])

    read, write = os.pipe()
    sys.stdout.flush()
    sys.stderr.flush()
    pid = os.fork()
    if pid == 0:  # the copy: its share, then its failure's message (if any) down the pipe
        os.close(read)
        code = 0
        try:
            run_share()
        except BaseException as exc:  # noqa: BLE001 (everything goes back to the parent, named)
            os.write(write, (str(exc) or type(exc).__name__).encode("utf-8", "replace"))
            code = 1
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    os.close(write)
    try:
        run_share()
    except BaseException:
        os.kill(pid, signal.SIGKILL)
        raise
    finally:
        message = _read_all(read)
        _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status):  # a crash, or killed from outside (out of memory)
        raise ForkedFailure(f"the forked case runner died of signal {os.WTERMSIG(status)}")
    if os.WIFEXITED(status) and os.WEXITSTATUS(status) != 0:
        raise ForkedFailure(message or f"the forked case runner exited with status {os.WEXITSTATUS(status)}")


def _read_all(fd: int) -> str:
    chunks = []
    try:
        while chunk := os.read(fd, 65536):
            chunks.append(chunk)
    finally:
        os.close(fd)
    return b"".join(chunks).decode("utf-8", "replace")
