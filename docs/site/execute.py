"""Executing case modules cell by cell, in this process, into notebooks holding their outputs.

jupytext reads each percent-format module; its code cells run in order in a fresh ``__main__``
module per case (as ``python cases/x.py`` would run it), with the project root as working
directory, every global RNG reseeded first and the process's global state restored after
(``torch_pitfalls.run.state``). torch is imported once for the whole corpus. Each cell's stdout, stderr and
warnings are captured, and each cell with output gets a stamp: the torch version and the device
it ran on. A cell tagged ``raises-exception`` shows its traceback and the case goes on; an
exception in any other cell stops the build, naming the case, its file and the line.
"""

from __future__ import annotations

import ast
import contextlib
import faulthandler
import functools
import linecache
import os
import re
import sys
import traceback
import types
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

import jupytext
import nbformat
import torch

from docs.site.capture import Streams, captured, printed_into
from docs.site.forked import ForkedFailure, for_each
from docs.site.outputs import clean_outputs
from docs.site.stamp import STAMP_KEY, Stamp
from torch_pitfalls.helpers import reseed
from torch_pitfalls.loader import LoadedCase
from torch_pitfalls.observation import CaseTimeout, Observation, first_line
from torch_pitfalls.run import state
from torch_pitfalls.run.runner import time_limit

EXPECTED_ERROR_TAG = "raises-exception"  # the Jupyter / MyST-NB tag for a cell meant to raise
LESSON_CALLS = ("broken", "fixed")  # the functions a case page calls for the reader, on "cpu"
LESSON_DEVICE = "cpu"


class CaseRunError(Exception):
    """A case whose cells failed when they should not; the message names the case and where."""


@dataclass
class Call:
    """One call of ``broken("cpu")`` or ``fixed("cpu")``: what it did, and what it printed."""

    run: Observation
    printed: list  # stream outputs, in the order written


@dataclass
class ExecutedCase:
    loaded: LoadedCase
    notebook: nbformat.NotebookNode  # the case's cells, with the outputs of this run
    devices: list[str] = field(default_factory=list)  # devices its cells ran on
    calls: dict[str, Call] = field(default_factory=dict)  # "broken"/"fixed" -> its call on cpu
    torch: str = ""  # the torch that ran it
    root: str = ""  # the project folder it ran from (its paths are not shown)


def execute_cases(cases: list[LoadedCase], root: Path, stamp: Stamp | None = None) -> list[ExecutedCase]:
    """Every case executed here, in order."""
    executed: list[ExecutedCase] = []
    execute_each(cases, root, executed.append, stamp, processes=1)
    return executed


def execute_each(
    cases: list[LoadedCase],
    root: Path,
    then: Callable[[ExecutedCase], object],
    stamp: Stamp | None = None,
    processes: int = 2,
    beside: Callable[[], object] | None = None,
) -> None:
    """Every case executed and handed to ``then`` (which writes its pages), the work shared with a
    forked copy of this process (``docs.site.forked``): each case still runs alone in its process,
    from a reseeded state. A failure in the copy comes back as ``CaseRunError`` with its message.
    ``beside``: other work that writes files and returns nothing (the site's other pages), taken first
    by whichever process is free, so that it runs beside the cases rather than after them."""
    stamp = stamp or Stamp.here()
    if processes > 1:  # the longest first, so that the two processes end together (see _starts_interpreters)
        cases = sorted(cases, key=lambda lc: not _starts_interpreters(lc))
    jobs = [functools.partial(_execute_into, then, lc, root, stamp) for lc in cases]
    if beside is not None:
        jobs.insert(0, beside)
    with _crash_report():
        try:
            for_each(jobs, lambda job: job(), processes)
        except ForkedFailure as exc:
            raise CaseRunError(str(exc)) from None


def _execute_into(then: Callable[[ExecutedCase], object], lc: LoadedCase, root: Path, stamp: Stamp) -> None:
    then(execute_case(lc, root, stamp))


# A case that starts fresh interpreters (each imports torch: seconds of CPU apiece) takes 3-10 s
# where most cases take well under one. Taken in file order, the last of them left one process
# running alone for the last 4-5 s of the shared execution (a core idle on a quiet machine); taken
# first, the short cases fill in behind them and both processes end within a case of each other.
# Read from the source alone, so the order never depends on a timing; each case still runs from a
# reseeded, restored state, so its outputs do not depend on the order.
_INTERPRETERS = re.compile(r"\brun_pythons?\(|\bsubprocess\b|\bsys\.executable\b|\bstart_processes\(|\bmp\.spawn\(")


def _starts_interpreters(lc: LoadedCase) -> bool:
    return bool(_INTERPRETERS.search(lc.path.read_text(encoding="utf-8")))


@contextlib.contextmanager
def _crash_report():
    """A case that crashes the interpreter (a segfault) leaves its Python traceback, naming the
    case module's file and line, on the real stderr, which the cells' capture redirects."""
    stderr = os.fdopen(os.dup(2), "w")
    was_enabled = faulthandler.is_enabled()
    faulthandler.enable(file=stderr)
    try:
        yield
    finally:
        faulthandler.disable()
        if was_enabled:
            faulthandler.enable(file=sys.__stderr__)
        stderr.close()


def execute_case(lc: LoadedCase, root: Path, stamp: Stamp) -> ExecutedCase:
    text = lc.path.read_text(encoding="utf-8")
    nb = jupytext.reads(text, fmt="py:percent")
    main = types.ModuleType("__main__")
    main.__file__ = str(lc.path)
    before = state.snapshot()
    saved_main, saved_argv = sys.modules.get("__main__"), sys.argv
    all_devices: list[str] = []
    calls: dict[str, Call] = {}
    try:
        sys.modules["__main__"] = main  # as runpy does: pickling and dataclasses look it up
        sys.argv = [str(lc.path)]  # a case that parses its arguments sees a script's argv
        os.chdir(root)
        if str(root) not in sys.path:
            sys.path.insert(0, str(root))
        reseed()  # the same outputs whatever ran before
        offsets = _cell_lines(text, nb.cells)
        count = 0
        for cell, line_offset in zip(nb.cells, offsets):
            if cell.cell_type != "code":
                continue
            count += 1
            cell.execution_count = count
            with _recording_calls(main.__dict__, calls):
                cell.outputs, devices = _run_cell(lc, cell, line_offset, main.__dict__)
            cell.outputs = clean_outputs(cell.outputs, (str(root),))
            if cell.outputs:
                cell.outputs.append(stamp.output(devices))
                all_devices += [d for d in devices if d not in all_devices]
        _call_the_rest(lc, main.__dict__, calls)
    finally:
        sys.modules["__main__"], sys.argv = saved_main, saved_argv
        state.restore(before)
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    nb.metadata[STAMP_KEY] = {
        "case": lc.id,
        "torch": stamp.torch,
        "devices": {d: stamp.names.get(d, d) for d in all_devices},
    }
    return ExecutedCase(lc, nb, all_devices, calls, stamp.torch, str(root))


_calls: tuple[dict, dict] | None = None  # (the case's namespace, its calls) while its cells run


@contextlib.contextmanager
def _recording_calls(namespace: dict, calls: dict):
    """Keep the first ``observe(broken, "cpu")`` (and ``fixed``) a demo cell makes, with what the
    call printed, as the lesson's output: the page shows that run instead of running it again."""
    global _calls
    _calls = (namespace, calls)
    try:
        yield
    finally:
        _calls = None


def _lesson_name(fn, device) -> str | None:
    if _calls is None or device != LESSON_DEVICE:
        return None
    namespace, calls = _calls
    return next((n for n in LESSON_CALLS if namespace.get(n) is fn and n not in calls), None)


def _observed_call(real, fn, device) -> Call:
    printed = Streams()

    def call(*args):
        with printed_into(printed):
            return fn(*args)

    return Call(real(call, device), printed.outputs())


def _call_the_rest(lc: LoadedCase, namespace: dict, calls: dict) -> None:
    """``broken``/``fixed`` that no demo cell observed on cpu: called once here, from a reseeded state."""
    from torch_pitfalls.observation import observe

    for name in LESSON_CALLS:
        fn = namespace.get(name)
        if callable(fn) and name not in calls:
            reseed()
            try:
                with time_limit(2 * lc.case.timeout):
                    calls[name] = _observed_call(observe, fn, LESSON_DEVICE)
            except CaseTimeout as exc:
                raise CaseRunError(f"case {lc.id} ({lc.path}): {name}({LESSON_DEVICE!r}) {exc}") from None


def _cell_lines(text: str, cells) -> list[int]:
    """The line (0-based) where each code cell's source starts in the module, so tracebacks
    name the module's own lines; -1 where jupytext changed the text (then a cell name is used)."""
    lines, pos = [], 0
    for cell in cells:
        at = text.find(cell.source, pos) if cell.cell_type == "code" and cell.source else -1
        if at < 0:
            lines.append(-1)
            continue
        lines.append(text.count("\n", 0, at))
        pos = at + len(cell.source)
    return lines


def _run_cell(lc: LoadedCase, cell, line_offset: int, namespace: dict) -> tuple[list, list[str]]:
    filename = str(lc.path)
    if line_offset < 0:
        filename = f"{lc.path}#cell-{cell.execution_count}"
        linecache.cache[filename] = (len(cell.source), None, cell.source.splitlines(True), filename)
    expects_error = EXPECTED_ERROR_TAG in cell.metadata.get("tags", ())
    streams = Streams()
    devices: list[str] = []
    try:
        tree = ast.parse(cell.source, filename)
        ast.increment_lineno(tree, max(line_offset, 0))
        last = tree.body.pop() if tree.body and isinstance(tree.body[-1], ast.Expr) else None
        with captured(streams), _recording_devices(devices), time_limit(2 * lc.case.timeout):
            exec(compile(tree, filename, "exec"), namespace)
            value = eval(compile(ast.Expression(last.value), filename, "eval"), namespace) if last else None
    except KeyboardInterrupt:
        raise
    except CaseTimeout as exc:
        raise CaseRunError(f"case {lc.id} ({lc.path}): cell {cell.execution_count} {exc}") from None
    except BaseException as exc:  # SystemExit too: a cell that exits is a failure like another
        if not expects_error:
            where = _innermost_line(exc, filename)
            raise CaseRunError(
                f"case {lc.id} ({lc.path}{where}): cell {cell.execution_count} raised "
                f"{type(exc).__name__}: {first_line(str(exc), None)}"
            ) from exc
        outputs = streams.outputs() + [_error_output(exc)]
        return outputs, devices or [_default_device()]
    if expects_error:
        raise CaseRunError(
            f"case {lc.id} ({lc.path}): cell {cell.execution_count} is tagged {EXPECTED_ERROR_TAG} but raised nothing"
        )
    outputs = streams.outputs()
    if value is not None:
        outputs.append(
            nbformat.v4.new_output(
                "execute_result", data={"text/plain": repr(value)}, execution_count=cell.execution_count
            )
        )
    return outputs, devices or [_default_device()]


def _default_device() -> str:
    """Where a cell's tensors go when it names no device (torch >= 2.3 can change it)."""
    get = getattr(torch, "get_default_device", None)
    return get().type if get else "cpu"


_cell_devices: list[str] = []  # the devices of the cell running now (see _recording_devices)


@contextlib.contextmanager
def _recording_devices(seen: list[str]):
    """Note the device each ``observe(fn, device)`` call in a cell runs on, for its stamp.

    The import cell binds ``observe`` once, and later cells call that binding, so the wrapper
    writes to the list of whichever cell is running when it is called, not the one it was made in.
    """
    global _cell_devices
    package, module = sys.modules["torch_pitfalls"], sys.modules["torch_pitfalls.observation"]
    real = module.observe

    @functools.wraps(real)
    def observe(fn, *args, **kwargs):
        device = args[0] if args else kwargs.get("device")
        if isinstance(device, (str, torch.device)):
            name = torch.device(device).type
            if name not in _cell_devices:
                _cell_devices.append(name)
        lesson = _lesson_name(fn, device) if len(args) == 1 and not kwargs else None
        if lesson is not None:
            call = _calls[1][lesson] = _observed_call(real, fn, device)
            return call.run
        return real(fn, *args, **kwargs)

    package.observe = module.observe = observe
    _cell_devices = seen
    try:
        yield
    finally:
        package.observe = module.observe = real
        _cell_devices = []


def _error_output(exc: BaseException) -> nbformat.NotebookNode:
    tb = exc.__traceback__
    while tb is not None and tb.tb_frame.f_code.co_filename == __file__:
        tb = tb.tb_next  # the executor's own frames are not the reader's business
    text = "".join(traceback.format_exception(type(exc), exc, tb)).rstrip("\n")
    return nbformat.v4.new_output("error", ename=type(exc).__name__, evalue=str(exc), traceback=text.split("\n"))


def _innermost_line(exc: BaseException, filename: str) -> str:
    line = None
    for frame, lineno in traceback.walk_tb(exc.__traceback__):
        if frame.f_code.co_filename == filename:
            line = lineno
    return f":{line}" if line else ""
