"""The explainer: an exception or a warning torch gave the user's program, named by the corpus case
that records it, with that case's fix.

What it knows comes only from the recorded matrix (``reports/torch-<release>-<device>.json``, read
through ``torch_pitfalls.matrix``): a message counts for a case when the case's broken variant produced it
and its fixed variant did not, on the same release, where that record did not find the symptom
absent. Two narrower rules keep it to the pitfall itself, read from the case's own file: a warning
counts only when the case's symptom asks for it (a pattern of its ``run.warned`` calls finds it;
``torch.jit.trace``'s deprecation notice beside the error a trace raises does not), and an error
recorded beside such a warning is left to the warning (gradcheck's Jacobian mismatch is a real
bug's too; the float32 warning is what tells the pitfall apart).

Each recorded message (masked as the fingerprints mask it) becomes a pattern in which what the
user's program chooses matches anything: numbers, shapes and sizes, addresses, paths and file
names, URLs, ``'<lambda>'``, and the names the case's own code defines (``'freeze_backbone'``,
``ScaleShiftBackward``). What torch and Python name stays literal (``'DataParallel'``, ``'verbose'``,
dtypes, backquoted API names): that is what tells one pitfall from another. A pattern that says too
little is refused rather than matched: one mostly made of wildcards; Python's own wording (``'X'
object has no attribute 'Y'``, ``invalid syntax``, ``object.__init__() takes exactly one argument``)
unless a name torch owns stays in it; the heading line of a longer error (``Error(s) in loading
state_dict for Linear:``), when what tells pitfalls apart is in the lines a record does not keep.

Version-aware: on a release the matrix recorded, a case is explained by what that release said
(a case with no usable record there, by every release, nearest first); on any other torch, by
every release, nearest first. The detail names the release whose wording matched. The exception
type or warning category must match by class name; the user's may be a subclass of the recorded.

Nothing is read until the first warning or exception, and the matrix once per process; a message
that matches nothing is remembered per (category, text), so a warning repeated in a loop costs a
dict lookup. Any failure (no reports folder, an unreadable report) switches the explainer off: it
explains nothing and never raises into the user's program (``problem`` says why).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from torch_pitfalls.casefile import CaseFile, CaseFileError, read_case

# -- what the watcher reports ----------------------------------------------------------------------


@dataclass(frozen=True)
class Explanation:
    """What ``Watcher.report`` accepts in place of a detector."""

    case: str
    message: str  # what goes wrong and the fix, one line
    detail: str  # "recorded on torch 2.13.0 as: UserWarning: ..."
    release: str  # the release whose wording matched
    recorded: str  # that wording (masked, as recorded)
    pedantic: bool = False


# -- recorded messages into patterns ---------------------------------------------------------------

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

_NOT_QUOTE = r"""[^\s'"():,]"""
_TRIGGERED = r"(?:\s*\(Triggered internally at [^)]*\)?\.?)?"  # a C++ warning's source line (masked in records)
# The specifics of a recorded message, in order of precedence, each with the regex that stands for
# it. The first group of names mirrors the placeholders of the fingerprints' masks.
_SPECIFICS = [
    ("triggered", r"\s*\(Triggered internally at <torch source>\)\.?", _TRIGGERED),
    ("url", r"https?://[^\s'\"<>)]+", r"\S+?"),
    ("install", rf"(?:<site-packages>|<python-lib>)/{_NOT_QUOTE}*", rf"{_NOT_QUOTE}*"),
    ("tmp", rf"<tmp>{_NOT_QUOTE}*", rf"{_NOT_QUOTE}*"),
    ("address", r"0x…", r"0x[0-9a-fA-F]+"),
    ("id", r"id=…", r"(?:id|pid)[=: ]\s*\d+"),
    ("time", r"<time>", r"\d+(?:\.\d+)?\s?(?:ns|us|µs|ms|s)"),
    ("source", r"<torch source>", r".*?"),
    ("anonymous", r"'<\w+>'", r"'[^']*'"),
    ("path", rf"(?<![\w.])/{_NOT_QUOTE}+", rf"{_NOT_QUOTE}+"),
    ("file", r"\b[\w.-]+\.(?:py|pt|pth|ckpt|bin|json|ya?ml|txt|csv|npy|npz|pkl|pickle|onnx|so)\b", rf"{_NOT_QUOTE}+"),
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
        wildcards += m.lastgroup != "triggered"
        pos = m.end()
    wildcards += _literal(body[pos:], names_rx, parts, literal, kept_names)
    if not prefix and not body.endswith("<torch source>)"):
        parts.append(_TRIGGERED)
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


# -- what a case's file says of itself (read as text, never imported) -----------------------------

# The harness's own variant names, and what torch's base classes define (forward, backward, ...).
_HARNESS_NAMES = frozenset({"broken", "fixed", "symptom", "check", "near_miss", "stable"})


@dataclass(frozen=True)
class CaseText:
    functions: frozenset[str]  # the names the case's code defines, which a user's program names otherwise
    classes: frozenset[str]
    warned: tuple[str | None, ...]  # the patterns of its run.warned / run.warned_as calls (None: any message)
    raised: tuple[str, ...] = ()  # the patterns of its run.raised calls: what its error must say in full


def case_text(case: CaseFile) -> CaseText:
    """What the explainer asks of a case's file (read by ``torch_pitfalls.casefile``)."""
    import torch

    bases = (
        torch.nn.Module,
        torch.autograd.Function,
        torch.utils.data.Dataset,
        torch.utils.data.Sampler,
        torch.optim.Optimizer,
    )

    def own(names):
        return frozenset(
            n for n in names if len(n) > 2 and n not in _HARNESS_NAMES and not any(hasattr(b, n) for b in bases)
        )

    functions, classes = case.defined_names()
    return CaseText(own(functions), own(classes), case.warned_patterns, case.raised_patterns)


def says_all_it_asks(text: CaseText, message: str) -> bool:
    """Every pattern the case's symptom asks of its error finds the user's whole message. Two cases
    whose records keep the same first line (torch.load's weights-only refusal, for an
    argparse.Namespace or for NumPy values) are told apart by the lines after it."""
    return all(re.search(p, message, re.IGNORECASE) for p in text.raised)


def names_the_warning(text: CaseText, message: str) -> bool:
    """The case's own symptom asks for this warning: a pattern of its ``run.warned`` calls finds it
    (as ``Observation.warned`` does). A warning no pattern asks for is incidental to the pitfall
    (``torch.jit.trace``'s deprecation beside the error a trace raises, a profiler's notice)."""
    for pattern in text.warned:
        if pattern is None:
            return True
        try:
            if re.search(pattern, message, re.IGNORECASE):
                return True
        except re.error:
            return True
    return False


def title_and_fix(case: CaseFile) -> tuple[str, str]:
    """The case's ``title`` and the opening of its "## The fix" section (one or two sentences)."""
    return case.title, _opening(case.fix_paragraph)


def _opening(paragraph: str, enough: int = 80, limit: int = 320) -> str:
    """The first sentence of a paragraph (the first two when the first is short), outside code."""
    sentences, start, code = [], 0, False
    for i, ch in enumerate(paragraph):
        if ch == "`":
            code = not code
        elif ch in ".!?" and not code and (i + 1 == len(paragraph) or paragraph[i + 1] == " "):
            sentences.append(paragraph[start : i + 1].strip())
            start = i + 1
            if sum(map(len, sentences)) >= enough:
                break
    if not sentences and paragraph.strip():
        sentences = [paragraph.strip()]
    text = " ".join(sentences)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _lower_first(text: str) -> str:
    word = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if word.isalpha() and word[0].isupper() and word[1:].islower() else text


# -- the recorded symptom messages ---------------------------------------------------------------


@dataclass(frozen=True)
class Recorded:
    case: str
    release: str
    device: str
    kind: str  # "error" or "warning"
    category: str  # the exception type's or the warning category's class name
    message: str  # masked, first line, as recorded


@dataclass
class Corpus:
    """What the matrix recorded, once per process: every symptom message, the releases and
    devices that recorded each case, and where each case's file is."""

    versions: list[str]
    messages: list[Recorded]
    usable: dict[str, set[str]]  # case -> the releases with a usable record of it
    files: dict[str, Path]

    def case_file(self, case: str) -> CaseFile | None:
        """The case's file, read once (``torch_pitfalls.casefile``); None where it cannot be read."""
        try:
            return read_case(self.files[case])
        except (CaseFileError, KeyError, UnicodeDecodeError):
            return None


def symptom_messages(record) -> list[tuple[str, str, str]] | None:
    """(kind, category, message) of what a record's broken variant said and its fixed variant did
    not; None when the record cannot say (no fingerprint of one of the variants)."""
    from torch_pitfalls.matrix.changes import remask  # today's masks, as the matrix compares records

    fps = record.fingerprints or {}
    broken, fixed = remask(fps.get("broken")), remask(fps.get("fixed"))
    if broken is None or fixed is None:
        return None
    said = set()
    if fixed["error"]:
        said.add(("error", fixed["error"]["type"], fixed["error"]["message"]))
    said.update(("warning", w["category"], w["message"]) for w in fixed["warnings"])
    out = []
    if broken["error"]:
        out.append(("error", broken["error"]["type"], broken["error"]["message"]))
    out += [("warning", w["category"], w["message"]) for w in broken["warnings"] if w["category"] != "…"]
    return [m for m in out if m not in said]


def load_corpus(reports_dir: Path, cases_dir: Path, matrix=None) -> Corpus:
    """The recorded messages of the cases; ``matrix``: those dirs' matrix, where the caller has it."""
    from torch_pitfalls.loader import case_id_of, find_case_files
    from torch_pitfalls.matrix import NOT_OBSERVED, load_matrix

    matrix = matrix if matrix is not None else load_matrix(reports_dir, cases_dir)
    files = {case_id_of(p): p for p in find_case_files(Path(cases_dir))}
    messages, usable = [], {}
    for src in matrix.cases:
        for device in matrix.devices:
            for cell in matrix.row(src.id, device):
                # a stale record still holds what torch said to an earlier text of the case
                if cell.status == NOT_OBSERVED or cell.record is None:
                    continue
                said = symptom_messages(cell.record)
                if said is None:
                    continue
                usable.setdefault(src.id, set()).add(cell.version)
                if cell.record.observed is False:
                    continue  # the symptom was absent there: what the broken code said is not it
                messages += [Recorded(src.id, cell.version, device, *m) for m in said]
    return Corpus(list(matrix.versions), messages, usable, files)


# -- the explainer -----------------------------------------------------------------------------------


@dataclass
class Entry:
    case: str
    kind: str
    category: str
    recorded: str
    releases: list[tuple[str, str]]  # (release, device), nearest first
    regex: re.Pattern


class Explainer:
    """Names the cases that record an exception or a warning. Build it with ``for_installed_torch``
    (or ``for_release`` to explain as another release would); it reads nothing until asked."""

    def __init__(
        self,
        release: str | None = None,
        reports_dir: str | Path | None = None,
        cases_dir: str | Path | None = None,
        matrix=None,
    ):
        self.release = release
        self._dirs = (reports_dir, cases_dir)
        self._matrix = matrix  # those dirs' matrix, already loaded by the caller (the docs build)
        self.problem: str | None = None  # why the explainer explains nothing, once it knows
        self._table: dict | None = None
        self._loading = False
        self._cache: dict = {}
        self._stories: dict[str, tuple[str, str]] = {}
        self._refused: dict[str, list[str]] = {}
        self._incidental: dict[str, set[str]] = {}
        self._entries: list[Entry] = []
        self._texts: dict[str, CaseText] = {}  # what each case's symptom asks (set when the table is built)

    @classmethod
    def for_installed_torch(cls) -> "Explainer":
        """The process's explainer for the torch it runs (one per process: it loads once)."""
        with _LOCK:
            if "installed" not in _SHARED:
                _SHARED["installed"] = cls()
            return _SHARED["installed"]

    @classmethod
    def for_release(
        cls, release: str, reports_dir: str | Path | None = None, cases_dir: str | Path | None = None
    ) -> "Explainer":
        """An explainer that takes the installed torch to be ``release`` (tests, other machines)."""
        return cls(release, reports_dir, cases_dir)

    # -- asked by the watcher ---------------------------------------------------------------------
    def for_warning(self, category, message) -> list[Explanation]:
        text = _text_of(message)
        if text is None:
            return []
        try:
            return self._explain("warning", category, text)
        except Exception as exc:  # noqa: BLE001 - never into the user's program
            self._switch_off(exc)
            return []

    def for_exception(self, exc: BaseException) -> list[Explanation]:
        try:
            found: list[Explanation] = []
            seen, e = set(), exc
            while e is not None and id(e) not in seen and len(seen) < 5:  # and what it was raised from
                seen.add(id(e))
                text = _text_of(e)
                if text is not None:
                    named = {f.case for f in found}
                    found += [x for x in self._explain("error", type(e), text) if x.case not in named]
                e = e.__cause__
            return found
        except Exception as err:  # noqa: BLE001
            self._switch_off(err)
            return []

    @property
    def refused(self) -> dict[str, list[str]]:
        """Case -> why no message names it (each recorded message was refused as a pattern)."""
        self.explained_cases()
        return self._refused

    @property
    def incidental(self) -> dict[str, set[str]]:
        """Case -> the warnings its broken run gave that its symptom does not ask for."""
        self.explained_cases()
        return self._incidental

    @property
    def entries(self) -> list[Entry]:
        """The patterns, each with the case it names and the releases that worded it so."""
        self.explained_cases()
        return self._entries

    def explained_cases(self) -> set[str]:
        """The cases this explainer can name."""
        try:
            table = self._loaded()
        except Exception as exc:  # noqa: BLE001
            self._switch_off(exc)
            return set()
        return {e.case for entries in table.values() for e in entries}

    # -- matching -----------------------------------------------------------------------------------
    def _explain(self, kind: str, category, text: str) -> list[Explanation]:
        key = (kind, category, text)
        hit = self._cache.get(key)
        if hit is not None:
            return list(hit)
        table = self._loaded()
        if self._loading:
            return []  # a warning raised while the explainer reads the matrix
        line = _normalised(text)
        names = [c.__name__ for c in getattr(category, "__mro__", ())] or [str(getattr(category, "__name__", category))]
        best: dict[str, tuple[int, Entry]] = {}
        for rank_name, name in enumerate(names):
            for entry in table.get((kind, name), ()):
                if entry.regex.match(line):
                    rank = (rank_name, self._distance(entry.releases[0][0]))
                    if entry.case not in best or rank < best[entry.case][0]:
                        best[entry.case] = (rank, entry)
        found = sorted(best.values(), key=lambda x: (x[0], x[1].case))
        if kind == "error" and len(found) > 1:  # one first line, several cases: the rest of the message decides
            told = [(r, e) for r, e in found if says_all_it_asks(self._texts[e.case], text)]
            found = told or found
        out = tuple(self._explanation(e, [o.case for _, o in found if o.case != e.case]) for _, e in found)
        if len(self._cache) > 4096:  # a message with a counter in it, warned in a loop
            self._cache.clear()
        self._cache[key] = out
        return list(out)

    def _explanation(self, entry: Entry, others: list[str]) -> Explanation:
        title, fix = self._story(entry.case)
        message = (
            f"{title}; the fix: {_lower_first(fix)}" if fix else title or f"the case {entry.case} records this message"
        )
        if others:
            message += f" (the same message is recorded by {len(others) + 1} cases: this one and {', '.join(others)})"
        release, device = entry.releases[0]
        where = f"torch {release}" + (f" ({device})" if device != "cpu" else "")
        return Explanation(
            entry.case, message, f"recorded on {where} as: {entry.category}: {entry.recorded}", release, entry.recorded
        )

    def _story(self, case: str) -> tuple[str, str]:
        if case not in self._stories:
            try:
                found = _corpus(*self._resolved_dirs(), self._matrix).case_file(case)
                self._stories[case] = title_and_fix(found) if found else ("", "")
            except Exception:  # noqa: BLE001 - a case file we cannot read: the id still names it
                self._stories[case] = ("", "")
        return self._stories[case]

    # -- loading --------------------------------------------------------------------------------------
    def _loaded(self) -> dict:
        if self._table is not None:
            return self._table
        if self._loading:
            return {}
        self._loading = True
        try:
            self._table = self._build()
        except Exception as exc:  # noqa: BLE001 - no reports folder, a bad report: explain nothing
            self._table = {}
            self.problem = f"{type(exc).__name__}: {exc}"
        finally:
            self._loading = False
        return self._table

    def _switch_off(self, exc: Exception) -> None:
        self._table = {}
        self.problem = self.problem or f"{type(exc).__name__}: {exc}"

    def _resolved_dirs(self) -> tuple[Path, Path]:
        reports, cases = self._dirs
        if cases is None:
            cases = corpus_dir()
        if reports is None:
            from torch_pitfalls.matrix import default_reports_dir

            reports = default_reports_dir(cases)
        return Path(reports).resolve(), Path(cases).resolve()

    def _installed_release(self):
        from torch_pitfalls.versions import release_of

        if self.release is None:
            import torch

            self.release = torch.__version__
        return release_of(self.release)

    def _distance(self, version: str) -> tuple:
        """Nearest first: the same minor release, then by minors away, older before newer."""
        from torch_pitfalls.versions import release_of

        mine, v = self._installed_release(), release_of(version)
        minors = lambda x: x.major * 1000 + x.minor  # noqa: E731
        return (abs(minors(v) - minors(mine)), v > mine, abs(v.micro - mine.micro))

    def _build(self) -> dict:
        corpus = _corpus(*self._resolved_dirs(), self._matrix)
        mine = str(self._installed_release())
        recorded_here = mine in corpus.versions
        texts = self._texts = {}
        asked: list[Recorded] = []  # the messages that count
        self._entries, self._refused, self._incidental = [], {}, {}
        for r in corpus.messages:
            # a case recorded on this release is explained by what this release said
            if recorded_here and mine in corpus.usable.get(r.case, ()) and r.release != mine:
                continue
            if r.case not in texts:
                found = corpus.case_file(r.case)
                texts[r.case] = case_text(found) if found else CaseText(frozenset(), frozenset(), (None,))
            if r.kind == "warning" and not names_the_warning(texts[r.case], r.message):
                self._incidental.setdefault(r.case, set()).add(f"{r.category}: {r.message}")
                continue  # its symptom does not ask for this warning
            asked.append(r)
        # A record that shows the pitfall as a warning and an error: the warning tells it apart (a
        # look-alike raises the same error without it, as gradcheck's Jacobian mismatch does for a
        # real bug checked in float64), so the warning names the case and the error alone does not.
        warned = {(r.case, r.release, r.device) for r in asked if r.kind == "warning"}
        merged: dict[tuple, list[tuple[str, str]]] = {}
        for r in asked:
            if r.kind == "error" and (r.case, r.release, r.device) in warned:
                self._refused.setdefault(r.case, []).append(
                    f"{r.category}: {r.message} (recorded beside a warning that tells the pitfall apart)"
                )
                continue
            merged.setdefault((r.case, r.kind, r.category, r.message), []).append((r.release, r.device))
        table: dict[tuple[str, str], list[Entry]] = {}
        for (case, kind, category, message), where in merged.items():
            text = texts[case]
            pattern = pattern_of(kind, category, message, text.functions, text.classes)
            if pattern.regex is None:
                self._refused.setdefault(case, []).append(f"{category}: {message} ({pattern.refused})")
                continue
            where.sort(key=lambda rd: (self._distance(rd[0]), rd[1] != "cpu", rd[1]))
            entry = Entry(case, kind, category, message, where, pattern.regex)
            self._entries.append(entry)
            table.setdefault((kind, category), []).append(entry)
        for case in {e.case for e in self._entries}:  # a case named some way is not refused
            self._refused.pop(case, None)
        return table


def _text_of(obj) -> str | None:
    try:
        return str(obj)
    except Exception:  # noqa: BLE001 - a user's exception whose __str__ fails: nothing to read
        return None


def _normalised(text: str, limit: int = 4000) -> str:
    from torch_pitfalls.observation import first_line

    line = " ".join(first_line(text, None).split())
    return line[:limit]


# -- once per process ---------------------------------------------------------------------------------

_LOCK = threading.RLock()
_SHARED: dict = {}
_CORPORA: dict[tuple[Path, Path], Corpus] = {}


def _corpus(reports_dir: Path, cases_dir: Path, matrix=None) -> Corpus:
    with _LOCK:
        key = (reports_dir, cases_dir)
        if key not in _CORPORA:
            _CORPORA[key] = load_corpus(reports_dir, cases_dir, matrix)
        return _CORPORA[key]


def corpus_dir() -> Path:
    """The corpus's cases folder: ``torch_pitfalls.loader.default_cases_dir()`` when it is the corpus (it
    holds the catalogue), else the one beside the harness package (a checkout) or inside it (the
    wheel). A user's program may have a ``cases/`` folder of its own in its working directory."""
    import torch_pitfalls
    from torch_pitfalls.loader import CORPUS_MARKER, default_cases_dir

    here = Path(torch_pitfalls.__file__).resolve().parent
    for candidate in (default_cases_dir(), here.parent / "cases", here / "cases"):
        if (Path(candidate) / CORPUS_MARKER).is_file():
            return Path(candidate).resolve()
    return Path(default_cases_dir()).resolve()


def explained_cases(release: str | None = None) -> set[str]:
    """The ids of the cases the explainer can name on the installed torch (or on ``release``)."""
    explainer = Explainer.for_installed_torch() if release is None else Explainer.for_release(release)
    return explainer.explained_cases()
