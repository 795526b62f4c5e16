"""``pitfalls watch [--format text|json|sarif] [--output PATH] [--fail] [--pedantic] [--select ID,..]
[--no-explain] SCRIPT [ARGS...]`` (or ``-m MODULE [ARGS...]``): run a program as ``python SCRIPT``
would, with the watcher on, and report what it found when the program ends.

The program's exit status is kept, unless ``--fail`` is given and something was found (then 1,
where the program itself exited 0). The text report goes to stderr; JSON and SARIF go to
``--output`` or, without it, to stdout, which then holds nothing else: the program's own
stdout is sent to stderr while it runs (at the file-descriptor level, so its subprocesses' too)."""

from __future__ import annotations

import json
import os
import runpy
import sys
import traceback
from contextlib import contextmanager
from pathlib import Path

EXIT_FOUND = 1


def add_commands(sub) -> None:
    p = sub.add_parser("watch", help="run a Python program and report the pitfalls it meets at run time")
    p.add_argument("--format", choices=("text", "json", "sarif"), default="text")
    p.add_argument("--output", metavar="PATH", help="write the report here instead of stdout/stderr")
    p.add_argument("--fail", action="store_true", help="exit 1 when something was found and the program exited 0")
    p.add_argument("--pedantic", action="store_true", help="also the heuristic detectors (they can be wrong)")
    p.add_argument("--select", default="", metavar="ID[,ID]", help="only the detectors of these case ids")
    p.add_argument(
        "--no-explain", action="store_true", help="do not name the cases behind the errors and warnings torch raises"
    )
    p.add_argument("-m", dest="module", action="store_true", help="SCRIPT is a module name, as python -m runs it")
    p.add_argument("script", metavar="SCRIPT", help="the program (a .py file, or a module with -m)")
    p.add_argument("args", nargs="...", metavar="ARGS", help="its arguments")
    p.set_defaults(handler=run_watch, needs_torch=True)


def _select(text: str, usage_error) -> tuple[str, ...]:
    from torch_pitfalls.watch.detectors import all_detectors

    ids = tuple(s.strip() for s in text.split(",") if s.strip())
    known = {d.case for d in all_detectors()}
    for i in ids:
        if i not in known:
            raise usage_error(f"--select {i}: no detector belongs to that case (detectors: {', '.join(sorted(known))})")
    return ids


@contextmanager
def _stdout_to_stderr(active: bool):
    """While the program runs, its stdout (fd 1) goes to stderr; yields the real stdout."""
    if not active:
        yield sys.stdout
        return
    sys.stdout.flush()
    saved = os.dup(1)
    os.dup2(2, 1)
    real = os.fdopen(saved, "w")
    try:
        yield real
    finally:
        sys.stdout.flush()
        os.dup2(saved, 1)


def _exit_status(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_program(script: str, args: list[str], as_module: bool) -> tuple[int, BaseException | None]:
    """Run the program as the interpreter would (sys.argv, sys.path[0], __main__); its exit
    status, and the exception that ended it, if any."""
    saved_argv, saved_path0 = sys.argv[:], sys.path[0]
    sys.argv = [script, *args]
    sys.path[0] = "" if as_module else str(Path(script).resolve().parent)
    try:
        if as_module:
            runpy.run_module(script, run_name="__main__", alter_sys=True)
        else:
            runpy.run_path(script, run_name="__main__")
        return 0, None
    except SystemExit as exc:
        return _exit_status(exc), None
    except KeyboardInterrupt as exc:
        traceback.print_exc()
        return 130, exc
    except BaseException as exc:  # noqa: BLE001 - printed as the interpreter prints it
        traceback.print_exc()
        return 1, exc
    finally:
        sys.argv, sys.path[0] = saved_argv, saved_path0


def run_watch(args, usage_error) -> int:
    from torch_pitfalls.watch.session import Watcher

    if not args.module and not Path(args.script).is_file():
        raise usage_error(f"{args.script}: no such file (a module name needs -m)")
    if args.output and Path(args.output).is_dir():
        raise usage_error(f"--output {args.output}: is a directory")
    select = _select(args.select, usage_error)
    watcher = Watcher(pedantic=args.pedantic, explain=not args.no_explain, select=select)
    structured = args.format != "text"
    with _stdout_to_stderr(structured and not args.output) as real_stdout:
        watcher.start()
        try:
            status, exc = run_program(args.script, list(args.args), args.module)
            if exc is not None and not isinstance(exc, KeyboardInterrupt):
                watcher.explain_exception(exc)
        finally:
            watcher.stop()
    if args.format == "json":
        text = json.dumps(watcher.to_json(status), indent=1)
    elif args.format == "sarif":
        text = json.dumps(watcher.to_sarif(), indent=1)
    else:
        text = watcher.text()
    _write(text, args.output, real_stdout if structured else sys.stderr)
    if args.fail and watcher.findings and status == 0:
        return EXIT_FOUND
    return status


def _write(text: str, output: str | None, stream) -> None:
    if output:
        path = Path(output)
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(text + "\n", encoding="utf-8")
        tmp.replace(path)  # whole or not at all
    else:
        stream.write(text + "\n")
        stream.flush()
