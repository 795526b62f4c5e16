"""What a person sees of a run: outputs cleaned of the build's machinery, and a call's result
rendered as Jupyter shows it.

Every text a page or notebook shows of a run passes through ``clean``: terminal colour codes
stripped (torch colours some messages), the profiler's own log lines dropped (Kineto writes
``USDT:… profiler_start`` to the C stderr), and this machine's paths (the checkout, the venv,
site-packages, the temp folder) replaced by placeholders. ``call_outputs`` renders one call of
``broken("cpu")`` or ``fixed("cpu")``: what it printed, its warnings whole (``UserWarning: …``),
then its exception (``RuntimeError: …``) or its value as IPython prints it.
"""

from __future__ import annotations

import re
import sys
import sysconfig
import tempfile
from pathlib import Path

import nbformat

from docs.site.text import ANSI
from torch_pitfalls.observation import Observation

ROOT = Path(__file__).resolve().parents[2]

# Kineto's log lines around every profiled block (torch.profiler, torch_pitfalls.helpers.ops_called).
# Kineto writes to the file descriptor, not through Python's buffer: its timestamped line can land
# in the middle of a line the program printed (after a value printed without its newline yet).
PROFILER_NOISE = re.compile(
    r"^(?:USDT:|STAGE:|\[W\d+ [^\]]*(?:kineto|profiler)[^\]]*\]).*\n?"
    r"|(?:USDT|STAGE):\d{4}-\d\d-\d\d \d\d:\d\d:\d\d \d+:\d+ \S+\.cpp:\d+\] [^\n]*\n?",
    re.M | re.I,
)


def _machine_paths() -> list[tuple[str, str]]:
    """(path of this machine, what a page shows instead), the longest first."""
    pairs = {}
    for key in ("purelib", "platlib"):
        pairs[sysconfig.get_paths()[key]] = "<site-packages>"
    pairs[sysconfig.get_paths()["stdlib"]] = "<python>"
    pairs[sys.prefix] = "<venv>"
    pairs[str(ROOT)] = "<project>"
    return sorted(((p.rstrip("/"), shown) for p, shown in pairs.items() if p and p != "/"), key=lambda x: -len(x[0]))


MACHINE_PATHS = _machine_paths()
TEMP_NAME = re.compile(re.escape(tempfile.gettempdir().rstrip("/")) + r"/(?:tmp|pitfalls)[\w.-]*")


def clean(text: str, roots: tuple[str, ...] = ()) -> str:
    """A run's text as a page shows it: no colour codes, no profiler log, no path of this machine
    (``roots``: other project folders a build ran from, shown relative like the checkout)."""
    text = PROFILER_NOISE.sub("", ANSI.sub("", text))
    extra = [(str(r).rstrip("/"), "<project>") for r in roots if str(r).rstrip("/") != str(ROOT)]
    for path, shown in sorted(extra, key=lambda x: -len(x[0])) + MACHINE_PATHS:
        text = text.replace(path + "/", "" if shown == "<project>" else shown + "/").replace(path, shown)
    return TEMP_NAME.sub("<tmp>", text)


def clean_outputs(outputs: list, roots: tuple[str, ...] = ()) -> list:
    """Cell outputs with every text cleaned; a stream left empty by the cleaning is dropped."""
    kept = []
    for out in outputs:
        if out.output_type == "stream":
            out.text = clean(out.text, roots)
            if not out.text:
                continue
        elif out.output_type == "error":
            out.evalue = clean(out.evalue, roots)
            out.traceback = [clean(line, roots) for line in out.traceback]
        elif "text/plain" in out.get("data", {}):
            out.data["text/plain"] = clean(out.data["text/plain"], roots)
        kept.append(out)
    return kept


def pretty(value) -> str:
    """The value as a Jupyter cell ending in it shows it (IPython's pretty printer: torch's repr
    of each tensor, a dict or tuple of tensors one item a line)."""
    from IPython.lib.pretty import pretty as ipython_pretty

    return ipython_pretty(value)


def warning_text(w) -> str:
    return f"{w.category.__name__}: {w.message}"


def error_text(error: BaseException) -> str:
    """The last line of the traceback a person sees: ``RuntimeError: message`` (whole)."""
    message = str(error)
    return f"{type(error).__name__}: {message}" if message else type(error).__name__


def call_outputs(run: Observation, printed: list, execution_count: int | None, roots: tuple[str, ...] = ()) -> list:
    """The outputs of a lesson's call cell (``broken("cpu")``): what it printed, its warnings,
    then the exception's line or the value; all cleaned."""
    outputs = list(printed)
    if run.warnings:
        text = "".join(warning_text(w) + "\n" for w in _distinct(run.warnings))
        outputs.append(nbformat.v4.new_output("stream", name="stderr", text=text))
    if run.error is not None:
        outputs.append(nbformat.v4.new_output("stream", name="stdout", text=error_text(run.error) + "\n"))
    elif run.value is not None:
        outputs.append(
            nbformat.v4.new_output(
                "execute_result", data={"text/plain": pretty(run.value)}, execution_count=execution_count
            )
        )
    return clean_outputs(outputs, roots)


def _distinct(caught: list) -> list:
    """Warnings as Python's default filter shows them: once per message and category."""
    seen, kept = set(), []
    for w in caught:
        key = (w.category, str(w.message))
        if key not in seen:
            seen.add(key)
            kept.append(w)
    return kept


def recorded_outputs(text: str, execution_count: int) -> list:
    """A record's ``returned …``/``raised …`` text (torch_pitfalls.observation's summary) as outputs."""
    if text.startswith("raised "):
        return clean_outputs([nbformat.v4.new_output("stream", name="stdout", text=text[len("raised ") :] + "\n")])
    value = text[len("returned ") :] if text.startswith("returned ") else text
    return clean_outputs(
        [nbformat.v4.new_output("execute_result", data={"text/plain": value}, execution_count=execution_count)]
    )
