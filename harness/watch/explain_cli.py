"""``pitfalls explain [TEXT]``: the explainer without running anything. An error message, a warning
line or a whole traceback, given as the argument or on stdin (``python train.py 2>&1 | pitfalls
explain``), is read for the exceptions and warnings in it; each is named by the corpus cases that
record it, with the fix and the case's page, as the installed torch release words it (the same
``Explainer`` the watcher asks). Exit 0 when a case is named, 1 when the messages found are recorded
by no case, 2 when the input holds no exception or warning line."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass

EXIT_UNKNOWN = 1
# ``RuntimeError: ...`` or ``torch.OutOfMemoryError: ...`` at the start of a line: a traceback's last line
_EXCEPTION = re.compile(
    r"^(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Za-z_]\w*(?:Error|Exception|Exit|Interrupt)): ?(?P<text>.*)$"
)
# ``path/train.py:12: UserWarning: ...``: how Python prints a warning
_WARNING = re.compile(r"^(?:.*?:\d+: )?(?:[A-Za-z_][\w]*\.)*(?P<name>[A-Za-z_]\w*Warning): ?(?P<text>.*)$")
_TRACEBACK_LINE = re.compile(
    r"^(Traceback \(most recent call last\):|  File \"|    |During handling|The above exception)"
)


@dataclass(frozen=True)
class Said:
    kind: str  # "error" or "warning"
    name: str  # the exception's class name or the warning's category
    text: str  # its message, with the lines that continue it


def add_commands(sub) -> None:
    p = sub.add_parser(
        "explain", help="name the corpus cases behind an error message or traceback (an argument, or stdin)"
    )
    p.add_argument("text", nargs="?", default="-", metavar="TEXT", help="the message or traceback; - or none: stdin")
    p.set_defaults(handler=run_explain, needs_torch=True)


def messages(text: str) -> list[Said]:
    """The exceptions and warnings in ``text``, in order; an exception's message runs on until a
    blank line or the next traceback."""
    found: list[Said] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].rstrip()
        warning = _WARNING.match(line.strip())
        exception = _EXCEPTION.match(line) if not warning else None
        if warning:
            found.append(Said("warning", warning["name"], warning["text"]))
        elif exception:
            rest = []
            while i + 1 < len(lines) and lines[i + 1].strip() and not _TRACEBACK_LINE.match(lines[i + 1]):
                i += 1
                rest.append(lines[i])
            found.append(Said("error", exception["name"], "\n".join([exception["text"], *rest])))
        i += 1
    return found


def run_explain(args, usage_error) -> int:
    from torch_pitfalls.observation import first_line
    from torch_pitfalls.watch.explain import Explainer

    text = sys.stdin.read() if args.text == "-" else args.text
    said = messages(text)
    if not said:
        raise usage_error(
            "no exception or warning line in the input (e.g. 'RuntimeError: ...' or '...: UserWarning: ...')"
        )
    explainer = Explainer.for_installed_torch()
    if explainer.problem is None:
        explainer.explained_cases()  # loads the records; a problem is known after this
    if explainer.problem is not None:
        raise usage_error(f"the explainer cannot read the corpus's records: {explainer.problem}")
    named = 0
    for s in said:
        found = explainer.for_message(s.kind, s.name, s.text)
        print(f"{s.name}: {first_line(s.text, 200)}")
        if not found:
            print("  no case of the corpus records this message")
        for x in found:
            named += 1
            print(f"  {x.case}: {x.message}")
            print(f"    {x.detail}; page: cases/{x.case}.html")
    return 0 if named else EXIT_UNKNOWN
