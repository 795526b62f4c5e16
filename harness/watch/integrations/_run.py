"""What both callbacks do: a watcher switched on when training starts and off when it ends, its
report printed (or handed to ``report``) once per run, from the process that trains."""

from __future__ import annotations

import sys

from torch_pitfalls.watch.session import Watcher


class WatchedTraining:
    def __init__(self, pedantic: bool = False, select: tuple[str, ...] = (), explain: bool = True, report=None):
        self.options = dict(pedantic=pedantic, select=tuple(select), explain=explain)
        self.report = report  # called with the watcher when a run ends; default: print its text
        self.watchers: list[Watcher] = []  # one per run (fit, then validate or test, ...)

    @property
    def running(self) -> Watcher | None:
        last = self.watchers[-1] if self.watchers else None
        return last if last is not None and last._mode is not None else None

    def begin(self) -> None:
        if self.running is None:
            watcher = Watcher(**self.options)
            self.watchers.append(watcher)
            watcher.start()

    def end(self, exc: BaseException | None = None) -> None:
        watcher = self.running
        if watcher is None:
            return
        if exc is not None:
            watcher.explain_exception(exc)
        watcher.stop()
        if self.report is not None:
            self.report(watcher)
        elif watcher.findings or watcher.errors:
            print(watcher.text(), file=sys.stderr)

    @property
    def findings(self) -> list:
        return [f for w in self.watchers for f in w.findings]
