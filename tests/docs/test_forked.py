"""docs.site.forked: the docs build's cases shared with a forked copy of the build's process."""

from __future__ import annotations

import os
import signal
import time

import pytest

from docs.site.forked import ForkedFailure, can_fork, for_each

needs_fork = pytest.mark.skipif(not can_fork(), reason="fork is used on Linux only")


def _mark(folder):
    def work(item):
        (folder / f"{item}.{os.getpid()}").write_text("done")

    return work


def _done(folder) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in folder.iterdir():
        item, pid = f.name.split(".")
        out.setdefault(item, []).append(pid)
    return out


@needs_fork
def test_every_item_is_done_once_by_one_of_two_processes(tmp_path):
    parent = os.getpid()

    def work(item):
        if os.getpid() == parent and item == 0:
            time.sleep(0.3)  # the copy takes the next items meanwhile
        _mark(tmp_path)(item)

    for_each(list(range(40)), work, processes=2)
    done = _done(tmp_path)
    assert sorted(map(int, done)) == list(range(40))
    assert all(len(pids) == 1 for pids in done.values())
    assert len({p for pids in done.values() for p in pids}) == 2  # the copy did some of them


def test_one_process_runs_them_here_in_order(tmp_path):
    seen = []
    for_each(["a", "b", "c"], seen.append, processes=1)
    assert seen == ["a", "b", "c"]


@needs_fork
def test_a_failure_in_the_copy_comes_back_with_its_message(tmp_path):
    parent = os.getpid()

    def work(item):
        if os.getpid() == parent:
            time.sleep(0.2)  # the copy takes every item but the first
        elif item == 5:
            raise RuntimeError("case five broke at line 3")

    with pytest.raises(ForkedFailure, match="case five broke at line 3"):
        for_each(list(range(10)), work, processes=2)


@needs_fork
def test_a_copy_that_dies_is_named_with_its_signal():
    parent = os.getpid()

    def work(item):
        if os.getpid() == parent:
            time.sleep(0.2)
        elif item == 3:
            os.kill(os.getpid(), signal.SIGKILL)  # as the out-of-memory killer ends a process

    with pytest.raises(ForkedFailure, match=f"signal {int(signal.SIGKILL)}"):
        for_each(list(range(6)), work, processes=2)


@needs_fork
def test_a_failure_here_stops_the_copy_and_is_raised_as_it_is(tmp_path):
    parent = os.getpid()

    def work(item):
        if os.getpid() == parent:
            raise ValueError("here")
        time.sleep(0.05)
        _mark(tmp_path)(item)

    with pytest.raises(ValueError, match="here"):
        for_each(list(range(200)), work, processes=2)
    assert len(list(tmp_path.iterdir())) < 200  # killed, not left to finish
