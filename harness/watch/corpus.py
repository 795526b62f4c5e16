"""What the explainer knows: the symptom messages the recorded matrix holds, and what each case's
file says of itself.

The messages come only from the recorded matrix (``reports/torch-<release>-<device>.json``, read
through ``torch_pitfalls.matrix``): a message counts for a case when the case's broken variant
produced it and its fixed variant did not, on the same release, where that record did not find the
symptom absent. A case's file is read as text, never imported (``torch_pitfalls.casefile``): the
names its code defines, the patterns its symptom asks of a warning or an error, its title and fix.
The matrix is read once per process (``shared_corpus``).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from pathlib import Path

from torch_pitfalls.casefile import CaseFile, CaseFileError, read_case

# -- what a case's file says of itself (read as text, never imported) -----------------------------

# The harness's own variant names, and what torch's base classes define (forward, backward, ...).
_HARNESS_NAMES = frozenset({"broken", "fixed", "symptom", "check", "near_miss", "stable"})


@dataclass(frozen=True)
class CaseText:
    functions: frozenset[str]  # the names the case's code defines, which a user's program names otherwise
    classes: frozenset[str]
    warned: tuple[str | None, ...]  # the patterns of its run.warned / run.warned_as calls (None: any message)
    raised: tuple[str, ...] = ()  # the patterns of its run.raised calls: what its error must say in full
    pinned: tuple[str, ...] = ()  # those built from its own program's values (sizes, class counts)


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
    return CaseText(own(functions), own(classes), case.warned_patterns, case.raised_patterns, case.pinned_patterns)


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

    # the shipped reports, validated by the project's own checks: the schema is not read again here,
    # where a user's program waits on it (JSON, totals and one record per cell still are)
    matrix = matrix if matrix is not None else load_matrix(reports_dir, cases_dir, schema=False)
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


# -- once per process ---------------------------------------------------------------------------------

_LOCK = threading.RLock()
_CORPORA: dict[tuple[Path, Path], Corpus] = {}


def shared_corpus(reports_dir: Path, cases_dir: Path, matrix=None) -> Corpus:
    """The process's one ``Corpus`` of these folders, loaded on the first call."""
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
