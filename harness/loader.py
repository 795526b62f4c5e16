"""Finding case modules, importing them and checking what they declare.

A case module lives at ``cases/<topic>/<id_with_underscores>.py`` and defines ``CASE`` (a
``Case``) and four functions: ``broken(device)``, ``symptom(run)``, ``fixed(device)`` and
``check(run, device)`` (the fix's own assertion, which the harness also runs on the broken
result). Optional: ``near_miss(device)`` (a look-alike failure the symptom must refuse) and
``stable(value)`` (what of the returned value is stable, for fingerprints).
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType

from torch_pitfalls.case import TOPICS, Case, CaseError

VARIANTS = ("broken", "symptom", "fixed", "check")


class LoadError(Exception):
    """A case file that cannot be used; the message names the file and what is wrong."""

    def __init__(self, path: Path, problem: str):
        self.path = path
        self.problem = problem
        super().__init__(f"{path}: {problem}")


@dataclass(frozen=True)
class LoadedCase:
    case: Case
    module: ModuleType
    path: Path
    topic: str
    source_sha256: str  # of the module's text: a record made from an older text is stale

    @property
    def id(self) -> str:
        return self.case.id


def _is_module_name(path: Path) -> bool:
    return path.suffix == ".py" and not path.name.startswith(("_", "test_", "conftest"))


# A corpus folder is a ``cases/`` that holds its catalogue: the installed plugin then collects
# this corpus (the checkout's, or the wheel's harness/cases), never a user's own ``cases/`` folder.
CORPUS_MARKER = "catalogue.csv"


def is_case_file(path: Path) -> bool:
    """``cases/<topic>/<name>.py`` beside ``cases/catalogue.csv`` (how pytest recognises a
    case), not private or a test module."""
    root = path.parent.parent
    return _is_module_name(path) and root.name == "cases" and (root / CORPUS_MARKER).is_file()


def default_cases_dir() -> Path:
    """``./cases`` where there is one (a checkout), else the corpus installed with the harness."""
    here = Path("cases")
    if here.is_dir():
        return here
    import importlib.util

    spec = importlib.util.find_spec("torch_pitfalls.cases")
    return Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else here


def case_id_of(path: Path) -> str:
    """The id a case file declares: its name with dashes (``backward_twice.py``: backward-twice)."""
    return Path(path).stem.replace("_", "-")


def source_sha256(text: bytes) -> str:
    """The hash a case's records carry: of its code, its prose cells left out, so a record goes
    stale when what ran changes (a variant, a predicate, the metadata), not when the story is
    reworded or translated."""
    code, prose = [], False
    for line in text.splitlines(keepends=True):
        if line.startswith(b"# %%"):
            prose = b"[markdown]" in line
        if not prose:
            code.append(line)
    return hashlib.sha256(b"".join(code)).hexdigest()


def _device_claim_problem(path: Path, case: Case) -> str | None:
    """A case that declares a device its variants never use claims what no run there can show."""
    from torch_pitfalls.casefile import read_case

    text = read_case(path)
    uses = [v for v in ("broken", "fixed") if text.uses_device(v)]
    if case.device_independent and "broken" in uses:  # (a fix may hand its device on: a mutant's does)
        return "device_independent=True, but broken uses its device argument: drop device_independent"
    if not uses and not case.device_independent:  # another device would run the very same code
        return (
            "neither broken nor fixed uses its device argument, so every device runs the same code: "
            'declare devices=("cpu",), device_independent=True'
        )
    return None


def find_case_files(root: Path) -> list[Path]:
    """Case modules one folder (the topic) below ``root``, whatever ``root`` is called."""
    root = Path(root)
    if not root.is_dir():
        raise LoadError(root, "no such cases directory")
    return sorted(p for p in root.glob("*/*.py") if _is_module_name(p))


def load_case(path: Path) -> LoadedCase:
    path = Path(path)
    topic = path.parent.name
    if topic not in TOPICS:
        raise LoadError(path, f"topic folder {topic!r} is not one of {', '.join(TOPICS)}")
    text = path.read_bytes()
    module = _import(path, f"pitfall_cases.{topic}.{path.stem}")
    case = getattr(module, "CASE", None)
    if not isinstance(case, Case):
        raise LoadError(path, "CASE: the module must define CASE = Case(...)")
    for name in VARIANTS:
        if not callable(getattr(module, name, None)):
            raise LoadError(path, f"{name}: the module must define a function {name}()")
    if case.module_stem != path.stem:
        raise LoadError(path, f"id: {case.id!r} needs the file name {case.module_stem}.py")
    problem = _device_claim_problem(path, case)
    if problem:
        raise LoadError(path, problem)
    return LoadedCase(case, module, path, topic, source_sha256(text))


def duplicate_id(path: Path, case_id: str, first: Path) -> LoadError:
    return LoadError(path, f"id: {case_id!r} is already declared by {first}")


def load_corpus(root: Path) -> tuple[list[LoadedCase], list[LoadError]]:
    """Every case under ``root``, and a LoadError for each file that cannot be used (a
    malformed module, or a second file declaring an id already taken): one bad file does not
    hide the others."""
    loaded, errors, seen = [], [], {}
    for path in find_case_files(root):
        try:
            lc = load_case(path)
            if lc.id in seen:
                raise duplicate_id(path, lc.id, seen[lc.id])
        except LoadError as exc:
            errors.append(exc)
            continue
        seen[lc.id] = path
        loaded.append(lc)
    return loaded, errors


def load_cases(root: Path) -> list[LoadedCase]:
    """Every case under ``root``; the first unusable file raises."""
    loaded, errors = load_corpus(root)
    if errors:
        raise errors[0]
    return loaded


def load_for_command(root: Path, usage_error) -> tuple[list[LoadedCase], list[LoadError]]:
    """What a ``pitfalls`` command runs on: the usable cases, and the files that could not be
    loaded, each named on stderr; a missing folder is the user's error (``usage_error``)."""
    try:
        cases, errors = load_corpus(Path(root))
    except LoadError as exc:  # the folder itself is missing
        raise usage_error(str(exc)) from None
    for err in errors:
        print(f"pitfalls: malformed case: {err}", file=sys.stderr)
    return cases, errors


def select_cases(cases: list[LoadedCase], ids: list[str], usage_error) -> list[LoadedCase]:
    """The cases named by ``ids`` (each once, in the order given), or all when none is named."""
    by_id = {lc.id: lc for lc in cases}
    for case_id in ids:
        if case_id not in by_id:
            raise usage_error(f"unknown case id {case_id!r} (see 'pitfalls list')")
    return [by_id[i] for i in dict.fromkeys(ids)] if ids else cases


def _import(path: Path, name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses and pickling look modules up by name
    try:
        spec.loader.exec_module(module)
    except CaseError as exc:
        sys.modules.pop(name, None)
        raise LoadError(path, f"CASE.{exc}") from None
    except Exception as exc:
        sys.modules.pop(name, None)
        raise LoadError(path, f"import failed: {type(exc).__name__}: {exc}") from exc
    return module
