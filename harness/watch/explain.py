"""The explainer: an exception or a warning torch gave the user's program, named by the corpus case
that records it, with that case's fix.

What it knows is the recorded matrix's symptom messages (``torch_pitfalls.watch.corpus``), each
turned into a pattern (``torch_pitfalls.watch.patterns``). Two narrower rules keep it to the pitfall
itself, read from the case's own file: a warning counts only when the case's symptom asks for it
(a pattern of its ``run.warned`` calls finds it; ``torch.jit.trace``'s deprecation notice beside
the error a trace raises does not), and an error recorded beside such a warning is left to the
warning (gradcheck's Jacobian mismatch is a real bug's too; the float32 warning is what tells the
pitfall apart).

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

from torch_pitfalls.watch.corpus import (
    CaseText,
    Recorded,
    case_text,
    corpus_dir,
    names_the_warning,
    says_all_it_asks,
    shared_corpus,
    title_and_fix,
)
from torch_pitfalls.watch.patterns import pattern_of

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

    def for_message(self, kind: str, name: str, text: str) -> list[Explanation]:
        """A message read as text (``pitfalls explain``): ``kind`` "error" or "warning", ``name`` its
        exception class or warning category as printed. With no class to walk, the name must be
        the recorded one."""
        category = type(name, (), {})  # only its name is read
        try:
            return self._explain(kind, category, text)
        except Exception as exc:  # noqa: BLE001
            self._switch_off(exc)
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
                found = shared_corpus(*self._resolved_dirs(), self._matrix).case_file(case)
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
        corpus = shared_corpus(*self._resolved_dirs(), self._matrix)
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
            if kind == "error" and text.pinned:
                # its symptom tells the pitfall by values its own program chose (a size, a class
                # count): a user's message of the same words, with their values, cannot be told apart
                self._refused.setdefault(case, []).append(
                    f"{category}: {message} (its symptom asks for its own values: {text.pinned[0]})"
                )
                continue
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


def _lower_first(text: str) -> str:
    word = text.split(" ", 1)[0]
    return text[0].lower() + text[1:] if word.isalpha() and word[0].isupper() and word[1:].islower() else text


# -- once per process ---------------------------------------------------------------------------------

_LOCK = threading.RLock()
_SHARED: dict = {}


def explained_cases(release: str | None = None) -> set[str]:
    """The ids of the cases the explainer can name on the installed torch (or on ``release``)."""
    explainer = Explainer.for_installed_torch() if release is None else Explainer.for_release(release)
    return explainer.explained_cases()
