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


def _until(happened, what: str) -> None:
    """Wait for the copy, however crowded the machine: the order these tests need comes from the copy
    having done something, never from a sleep it might outlast. The cap only turns a copy that never
    comes into a failure instead of a hang."""
    give_up = time.monotonic() + 600
    while not happened():
        assert time.monotonic() < give_up, f"the forked copy never {what}"
        time.sleep(0.01)


def _done(folder) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for f in folder.iterdir():
        item, pid = f.name.split(".")
        out.setdefault(item, []).append(pid)
    return out


@needs_fork
def test_every_item_is_done_once_by_one_of_two_processes(tmp_path):
    parent = os.getpid()

    def copy_did_one():
        return any(f.name.split(".")[1] != str(parent) for f in tmp_path.iterdir())

    def work(item):
        if os.getpid() == parent and item == 0:
            _until(copy_did_one, "took an item")  # the copy takes the next items meanwhile
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
    failed = tmp_path / "five"

    def work(item):
        if os.getpid() == parent:
            _until(failed.exists, "reached item 5")  # the copy takes every item but the first
        elif item == 5:
            failed.write_text("")
            raise RuntimeError("case five broke at line 3")

    with pytest.raises(ForkedFailure, match="case five broke at line 3"):
        for_each(list(range(10)), work, processes=2)


@needs_fork
def test_a_copy_that_dies_is_named_with_its_signal(tmp_path):
    parent = os.getpid()
    dying = tmp_path / "three"

    def work(item):
        if os.getpid() == parent:
            _until(dying.exists, "reached item 3")
        elif item == 3:
            dying.write_text("")
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
