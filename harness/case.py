"""The metadata of one pitfall, declared as data and validated when it is built.

A case module declares ``CASE = Case(...)`` once; everything the harness, the docs and the
version matrix know about the case comes from that object. Validation happens in
``__post_init__`` (the OpInfo way), so a malformed case fails at collection with the field named.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from packaging.version import Version

from torch_pitfalls.versions import MATRIX_FIRST, parse_range, release_of

# The symptom index's headings, in the order a learner meets them (docs/site/symptom_page.py).
SYMPTOM_CATEGORIES = ("nan-inf", "wrong-shape", "wrong-values", "slow-or-memory", "error", "warning")
KINDS = ("error", "silent", "warning", "performance", "historical")
DEVICES = ("cpu", "cuda")
TOPICS = ("autograd", "numerics", "dtypes", "shapes", "training", "data", "devices", "python", "upgrade")
_ID = re.compile(r"[a-z0-9]+(-[a-z0-9]+)*")


class CaseError(ValueError):
    """A case's metadata is malformed; the message names the field."""

    def __init__(self, field_name: str, problem: str):
        self.field = field_name
        super().__init__(f"{field_name}: {problem}")


@dataclass(frozen=True)
class Source:
    """Where a pitfall was described: a post, a doc page, an issue."""

    title: str
    url: str | None = None
    passage: str | None = None  # where in the document, e.g. "section 'index_select'"

    def at(self, passage: str) -> "Source":
        """This source, pointing at one passage."""
        return Source(self.title, self.url, passage)


@dataclass(frozen=True)
class Affects:
    """One rule for where the symptom shows; it applies when every key it sets matches.

    Modelled on torch's ``DecorateInfo``: ``versions`` is a PEP 440 range (``"*"`` or None:
    every release, no known bound), ``device`` narrows the rule to one device, ``form`` names the
    shape the symptom takes there (what ``symptom`` returns when it returns a string). ``reason``
    and ``issue`` are printed by the docs and matrix.

    Bounds say where they come from. A bound at or after ``MATRIX_FIRST`` is observed: the version
    matrix brackets it between two releases. A lower bound before it cannot be observed here, so
    ``since`` must say where it was read (a source post, release notes, a PR). ``proxy`` says how
    this device stands in for another where the symptom's own device is absent (e.g. ``meta``
    showing the copy a move to CUDA makes).
    """

    versions: str | None = None
    device: str | None = None
    form: str | None = None
    reason: str | None = None
    issue: str | None = None
    since: str | None = None
    proxy: str | None = None

    def __post_init__(self):  # noqa: C901 - one check per field, each naming the field
        if self.versions is not None:
            try:
                low = parse_range(self.versions).lower_bound
            except ValueError as exc:
                raise CaseError("affects", str(exc)) from None
            if low is not None and low < Version(MATRIX_FIRST) and not self.since:
                raise CaseError(
                    "affects",
                    f"the lower bound {low} of {self.versions!r} is older than the matrix's first release "
                    f"({MATRIX_FIRST}), so no run observes it: write Affects({self.versions!r}, since='<where it "
                    "is documented>') or drop the bound ('*': no known lower bound)",
                )
        if self.since is not None and (self.versions is None or parse_range(self.versions).lower_bound is None):
            raise CaseError("affects", "since= documents a lower bound, and the range has none")
        if self.device is not None and self.device not in DEVICES:
            raise CaseError("affects", f"unknown device {self.device!r} (known: {', '.join(DEVICES)})")

    def matches(self, torch_version: str, device: str) -> bool:
        if self.device is not None and self.device != device:
            return False
        return self.versions is None or parse_range(self.versions).contains(torch_version)

    @property
    def inferred_bound(self) -> bool:
        """The lower bound lies before the matrix: read in ``since``, not observed."""
        return self.since is not None


@dataclass(frozen=True)
class Case:
    """One pitfall's metadata."""

    id: str  # stable, kebab-case; the module file is the id with "_" for "-"
    title: str  # one line, as a heading
    kind: str  # one of KINDS
    affects: str | tuple[Affects, ...]  # torch versions (and devices/forms) showing the symptom
    devices: tuple[str, ...]  # devices on which the symptom shows; the case runs on all of DEVICES
    sources: tuple[Source, ...]  # the documents it comes from
    # What a learner sees first, in one plain line, and under which heading of the symptom index
    # (SYMPTOM_CATEGORIES): the site's symptom page and the home table are built from these.
    symptom_category: str = ""
    symptom_line: str = ""
    star: bool = False  # a pitfall the source posts single out (the catalogue's star)
    tags: tuple[str, ...] = ()
    references: tuple[str, ...] = ()  # upstream links: torch issues, PRs, docs, torchfix rules
    isolate: tuple[str, ...] = ()  # devices on which a run may crash or poison the process
    timeout: float = 60.0  # seconds per variant run; a hang becomes an `error`
    requires: tuple[str, ...] = ()  # optional importable modules; missing -> `unverified` (the reason named)
    # The variants never use their device: one CPU run stands for every device, and no other
    # device records it (a CUDA "reproduction" of such a case would be a CPU run counted twice).
    device_independent: bool = False
    rules: tuple[Affects, ...] = field(init=False, repr=False, compare=False)

    def __post_init__(self):  # noqa: C901 - one check per field, each naming the field
        def bad(name, problem):
            raise CaseError(name, problem)

        if not isinstance(self.id, str) or not _ID.fullmatch(self.id):
            bad("id", f"{self.id!r} is not a kebab-case id like 'nan-grad-through-mask'")
        if not isinstance(self.title, str) or not self.title.strip():
            bad("title", "must be a non-empty string")
        if self.kind not in KINDS:
            bad("kind", f"unknown kind {self.kind!r} (known: {', '.join(KINDS)})")
        for name in ("devices", "tags", "references", "isolate", "requires", "sources"):
            value = getattr(self, name)
            if isinstance(value, str) or not isinstance(value, (tuple, list)):
                bad(name, f"must be a tuple, got {type(value).__name__}")
            object.__setattr__(self, name, tuple(value))
        if not self.devices:
            bad("devices", "must name at least one device")
        for name in ("devices", "isolate"):
            for dev in getattr(self, name):
                if dev not in DEVICES:
                    bad(name, f"unknown device {dev!r} (known: {', '.join(DEVICES)})")
        for tag in self.tags:
            if not isinstance(tag, str) or not tag.isidentifier():
                bad("tags", f"{tag!r} is not an identifier (tags are pytest markers: -m {tag})")
        if not self.sources:
            bad("sources", "must cite at least one source")
        for src in self.sources:
            if not isinstance(src, Source):
                bad("sources", f"entries must be Source(...), got {type(src).__name__}")
        if self.symptom_category and self.symptom_category not in SYMPTOM_CATEGORIES:
            bad(
                "symptom_category",
                f"unknown category {self.symptom_category!r} (known: {', '.join(SYMPTOM_CATEGORIES)})",
            )
        if bool(self.symptom_category) != bool(isinstance(self.symptom_line, str) and self.symptom_line.strip()):
            bad("symptom_line", "a symptom line and its category come together: give both or neither")
        if not isinstance(self.star, bool):
            bad("star", f"must be True or False, got {self.star!r}")
        if not isinstance(self.device_independent, bool):
            bad("device_independent", f"must be True or False, got {self.device_independent!r}")
        if self.device_independent and self.devices != ("cpu",):
            bad("devices", f'a device-independent case runs once, on cpu: devices=("cpu",), not {self.devices!r}')
        if not isinstance(self.timeout, (int, float)) or self.timeout <= 0:
            bad("timeout", f"must be a positive number of seconds, got {self.timeout!r}")
        object.__setattr__(self, "rules", self._rules())

    def _rules(self) -> tuple[Affects, ...]:
        if isinstance(self.affects, str):
            return (Affects(versions=self.affects),)
        if isinstance(self.affects, (tuple, list)) and self.affects:
            for entry in self.affects:
                if not isinstance(entry, Affects):
                    raise CaseError("affects", f"entries must be Affects(...), got {type(entry).__name__}")
            return tuple(self.affects)
        raise CaseError("affects", f"must be a version range or a tuple of Affects, got {self.affects!r}")

    @property
    def module_stem(self) -> str:
        return self.id.replace("-", "_")

    def rule_for(self, torch_version: str, device: str) -> Affects | None:
        """The first rule under which the symptom is expected here, or None (expected absent)."""
        if device not in self.devices:
            return None
        return next((r for r in self.rules if r.matches(torch_version, device)), None)

    def outside_observed_change(self, torch_version: str, device: str) -> str | None:
        """Where the symptom is not expected only because this release lies before the release
        that changed the behaviour (or after the one that changed it back), both observed by the
        matrix: the broken code is the spelling that was right on this release, so nothing can
        tell it from the fix here. Returns the reason in words, or None.

        Only bounds at or after MATRIX_FIRST count (the matrix brackets them); a bound read in
        ``since`` or an unbounded rule never does."""
        if device not in self.devices or self.expected(torch_version, device):
            return None
        release = release_of(torch_version)
        reasons = []
        for rule in self.rules:
            if rule.device not in (None, device):
                continue
            if rule.versions is None or rule.since is not None:
                return None
            rng = parse_range(rule.versions)
            low, high = rng.lower_bound, rng.upper_bound
            if low is not None and low >= Version(MATRIX_FIRST) and release < low:
                reasons.append(f"before {low}, where {rule.versions!r} starts")
            elif high is not None and high >= Version(MATRIX_FIRST) and release >= high:
                reasons.append(f"from {high} on, where {rule.versions!r} ends")
            else:
                return None
        if not reasons:
            return None
        return f"torch {torch_version} is {' and '.join(dict.fromkeys(reasons))}: the broken code was right here"

    def expected(self, torch_version: str, device: str) -> bool:
        return self.rule_for(torch_version, device) is not None

    @property
    def affects_text(self) -> str:
        """The range as a reader writes it, for tables."""
        parts = []
        for r in self.rules:
            text = r.versions or "any"
            if r.device:
                text += f" on {r.device}"
            if r.form:
                text += f" ({r.form})"
            parts.append(text)
        return "; ".join(parts)
