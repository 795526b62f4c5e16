"""A recorded (masked) message turned into the pattern the explainer matches a user's message with.

What the user's program chooses matches anything: numbers, shapes and sizes, addresses, paths and
file names, URLs, ``'<lambda>'``, and the names the case's own code defines (``'freeze_backbone'``,
``ScaleShiftBackward``). The placeholders the fingerprints' masks wrote (``torch_pitfalls.run.fingerprint.MASKS``)
become the wildcards that table names. What torch and Python name stays literal (``'DataParallel'``,
``'verbose'``, dtypes, backquoted API names): that is what tells one pitfall from another. A pattern
that says too little is refused rather than matched: one mostly made of wildcards; Python's own
wording (``'X' object has no attribute 'Y'``, ``invalid syntax``, ``object.__init__() takes exactly
one argument``) unless a name torch owns stays in it; the heading line of a longer error
(``Error(s) in loading state_dict for Linear:``), when what tells pitfalls apart is in the lines a
record does not keep.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from torch_pitfalls.run.fingerprint import MASKS, NOT_QUOTE, TORCH_SOURCE, TRIGGERED

# Python's own wording: any program can produce it, so it names a pitfall only together with a
# name torch owns that stays literal in the pattern ('DataParallel', 'Tensor', 'torch._six').
PYTHON_WORDING = re.compile(
    r"""^(?:
    invalid\ syntax
  | '[^']*'\ object\ has\ no\ attribute\ '[^']*'
  | '[^']*'\ object\ is\ not\ (?:callable|subscriptable|iterable)
  | [\w.<>]+\(\)\ (?:got\ an\ unexpected\ keyword\ argument|got\ multiple\ values\ for\ argument|takes\ |missing\ \d)
  | unsupported\ operand\ type
  | No\ module\ named[ ]
  | cannot\ import\ name[ ]
  | object\.__init__\(\)\ takes\ exactly\ one\ argument
  | name\ '[^']*'\ is\ not\ defined
  | (?:list|tuple|string)\ index\ out\ of\ range
  | division\ by\ zero
)""",
    re.X,
)
PYTHON_ERRORS = ("SyntaxError", "IndentationError", "TabError")  # always Python's wording
BUILTIN_NAMES = frozenset(
    {
        "NoneType",
        "int",
        "float",
        "str",
        "bytes",
        "bool",
        "list",
        "tuple",
        "dict",
        "set",
        "object",
        "type",
        "function",
        "method",
        "module",
        "builtin_function_or_method",
        "generator",
        "complex",
    }
)
MIN_LITERAL_LETTERS = 16  # a pattern must keep at least this many letters of its own words ...
LETTERS_PER_WILDCARD = 4  # ... and this many per wildcard it holds

# The specifics of a recorded message, in order of precedence, each with the regex that stands for
# it: first the placeholders of the fingerprints' masks (each opens with a character no later
# specific opens with, so none takes another's place), then what a user's program chooses.
_SPECIFICS = [
    *((m.name, m.recorded, m.wildcard) for m in MASKS),
    ("url", r"https?://[^\s'\"<>)]+", r"\S+?"),
    ("source", re.escape(TORCH_SOURCE), r".*?"),
    ("anonymous", r"'<\w+>'", r"'[^']*'"),
    ("path", rf"(?<![\w.])/{NOT_QUOTE}+", rf"{NOT_QUOTE}+"),
    ("file", r"\b[\w.-]+\.(?:py|pt|pth|ckpt|bin|json|ya?ml|txt|csv|npy|npz|pkl|pickle|onnx|so)\b", rf"{NOT_QUOTE}+"),
    (
        "shape",
        r"\[\s*(?:-?\d+(?:\s*,\s*-?\d+)*)?\s*\]|\(\s*-?\d+\s*(?:,\s*-?\d+\s*)+,?\s*\)|\b\d+(?:x\d+)+\b",
        r"(?:\[[-\d,\s]*\]|\([-\d,\s]*\)|\d+(?:x\d+)*)",
    ),
    ("number", r"(?<![\w.])-?\d+(?:\.\d+)*(?:e[-+]?\d+)?(?!\w)", r"-?\d+(?:\.\d+)*(?:e[-+]?\d+)?"),
]
_SPECIFIC = re.compile("|".join(f"(?P<{name}>{rx})" for name, rx, _ in _SPECIFICS))
_WILDCARD = {name: wild for name, _, wild in _SPECIFICS}
_QUOTED = re.compile(r"'([^'\s]+)'")


@dataclass(frozen=True)
class Pattern:
    regex: re.Pattern | None  # None: refused (``refused`` says why)
    refused: str = ""


def pattern_of(
    kind: str,
    category: str,
    recorded: str,
    functions: frozenset[str] = frozenset(),
    classes: frozenset[str] = frozenset(),
) -> Pattern:
    """The pattern a recorded (masked) message stands for. ``functions`` and ``classes``: the names
    the case's own code defines, which a user's program names otherwise: quoted (``'freeze_backbone'``)
    they match any quoted name, and a class name also as the head of a word (``ScaleShiftBackward``)."""
    prefix = recorded.endswith("…")  # cut short when recorded: the user's message need only start with it
    body = recorded[:-1] if prefix else recorded
    parts: list[str] = []
    literal: list[str] = []
    wildcards = 0
    kept_names: list[str] = []  # quoted names that stay literal
    names_rx = _defined_names_regex(functions | classes, classes)
    pos = 0
    for m in _SPECIFIC.finditer(body):
        wildcards += _literal(body[pos : m.start()], names_rx, parts, literal, kept_names)
        parts.append(_WILDCARD[m.lastgroup])
        wildcards += m.lastgroup != TRIGGERED.name
        pos = m.end()
    wildcards += _literal(body[pos:], names_rx, parts, literal, kept_names)
    if not prefix and not body.endswith(f"{TORCH_SOURCE})"):
        parts.append(TRIGGERED.wildcard)
    letters = sum(c.isalpha() for c in "".join(literal))
    if kind == "error" and not prefix and body.rstrip().endswith(":"):
        return Pattern(None, "only the heading of a longer message is recorded; its lines tell pitfalls apart")
    if (kind == "error" and category in PYTHON_ERRORS) or PYTHON_WORDING.match(body):
        if not any(n not in BUILTIN_NAMES for n in kept_names):
            return Pattern(None, "Python's own wording, with no name torch owns left in it")
    if letters < MIN_LITERAL_LETTERS or letters < LETTERS_PER_WILDCARD * wildcards:
        return Pattern(None, f"mostly wildcards ({letters} letters of its own, {wildcards} wildcards)")
    source = "".join(parts) + ("" if prefix else r"\Z")
    return Pattern(re.compile(source, re.S))


def _defined_names_regex(quoted: frozenset[str], bare: frozenset[str]) -> re.Pattern | None:
    def alternatives(names):
        return "|".join(sorted((re.escape(n) for n in names), key=len, reverse=True))

    rx = [rf"'(?:{alternatives(quoted)})'"] if quoted else []
    if bare:  # a whole word, or the head of one (ScaleShift in ScaleShiftBackward)
        rx.append(rf"\b(?:{alternatives(bare)})(?=[A-Z]|\b)")
    return re.compile("|".join(rx)) if rx else None


def _literal(text: str, names_rx, parts: list[str], literal: list[str], kept_names: list[str]) -> int:
    """Escape a stretch of literal text into ``parts``, with the case's own names as wildcards;
    the number of wildcards added."""
    added, pos = 0, 0
    for m in names_rx.finditer(text) if names_rx else ():
        _keep(text[pos : m.start()], parts, literal, kept_names)
        parts.append(r"'[^']*'" if m.group().startswith("'") else r"\w+?")
        added += 1
        pos = m.end()
    _keep(text[pos:], parts, literal, kept_names)
    return added


def _keep(text: str, parts: list[str], literal: list[str], kept_names: list[str]) -> None:
    if text:
        parts.append(re.escape(text))
        literal.append(text)
        kept_names.extend(_QUOTED.findall(text))
