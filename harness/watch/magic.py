"""The watcher in a notebook: ``%load_ext torch_pitfalls.watch``, then

    %%watch [--pedantic] [--select ID,ID]     one cell, its report printed under it
    %watch on [--pedantic] [--select ID,ID]   every cell from here on ...
    %watch report                             ... what was found so far
    %watch off                                ... and off, with the report

An exception a watched cell raises is shown by the notebook as usual, and named by the explainer
when a case records it. IPython is the notebook's; nothing here imports it at module level.
"""

from __future__ import annotations

import argparse
import shlex

from torch_pitfalls.watch.session import Watcher

_STATE: dict = {"watcher": None}  # the watcher %watch on started


def _options(line: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="%watch", add_help=False, exit_on_error=False)
    parser.add_argument("action", nargs="?", default="", choices=("", "on", "off", "report"))
    parser.add_argument("--pedantic", action="store_true")
    parser.add_argument("--select", default="")
    parser.add_argument("--no-explain", action="store_true")
    try:
        return parser.parse_args(shlex.split(line))
    except (argparse.ArgumentError, SystemExit) as exc:
        raise ValueError(f"%watch: {exc}; use %%watch [--pedantic] [--select ID,ID] or %watch on|off|report") from None


def _watcher(options) -> Watcher:
    select = tuple(s for s in options.select.split(",") if s)
    return Watcher(pedantic=options.pedantic, explain=not options.no_explain, select=select)


def _report(watcher: Watcher) -> None:
    print(watcher.text() if (watcher.findings or watcher.errors) else "pitfalls watch: nothing found")


def watch_cell(shell, line: str, cell: str) -> None:
    """``%%watch``: the cell run under its own watcher, the report printed under it."""
    watcher = _watcher(_options(line))
    with watcher:
        result = shell.run_cell(cell)
        error = result.error_in_exec
        if error is not None:
            watcher.explain_exception(error)
    _report(watcher)


def watch_line(shell, line: str) -> None:
    """``%watch on|off|report``."""
    options = _options(line)
    running = _STATE["watcher"]
    if options.action == "on":
        if running is not None:
            print("pitfalls watch: already on (%watch off first)")
            return
        _STATE["watcher"] = _watcher(options)
        _STATE["watcher"].start()
        print("pitfalls watch: on for the cells that follow (%watch off to stop)")
    elif options.action in ("off", "report"):
        if running is None:
            print("pitfalls watch: not on (%watch on, or %%watch on a cell)")
            return
        if options.action == "off":
            running.stop()
            _STATE["watcher"] = None
        _report(running)
    else:
        print("usage: %watch on [--pedantic] [--select ID,ID] | %watch report | %watch off; or %%watch on a cell")


def load_ipython_extension(shell) -> None:
    shell.register_magic_function(lambda line, cell: watch_cell(shell, line, cell), "cell", "watch")
    shell.register_magic_function(lambda line: watch_line(shell, line), "line", "watch")


def unload_ipython_extension(shell) -> None:
    running = _STATE["watcher"]
    if running is not None:
        running.stop()
        _STATE["watcher"] = None
