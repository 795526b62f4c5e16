"""What changed for a user between two records of the same case on two torch releases.

Derived only from what was recorded: whether the symptom was seen, and the fingerprints of the
broken and fixed runs (``torch_pitfalls.run.fingerprint``). Each difference is one ``Change`` of a kind a
CI job can gate on (``pitfalls upgrade --fail-on``). Numbers are compared with a relative
tolerance, so the last bits of a float sum (which differ with a release's kernels) are not a
change; a value that moved by more is.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass

from torch_pitfalls.run.fingerprint import remask

KINDS = (
    "symptom-appears",  # the broken code starts to show the pitfall
    "symptom-disappears",  # ... stops showing it
    "starts-raising",  # a variant that returned now raises
    "stops-raising",  # a variant that raised now returns
    "exception-type",  # it raises another exception type
    "message-reworded",  # the same exception type, another message
    "warning-added",
    "warning-removed",
    "warning-category",  # the same warning, another category (UserWarning -> FutureWarning)
    "warning-reworded",  # the same category, another message
    "value-changed",  # the returned value (type, dtype, shape or numbers) differs
    "form-changed",  # the symptom's declared form (Affects.form), where no fingerprint shows why
)
REL_TOL = 1e-4


@dataclass(frozen=True)
class Change:
    case: str
    device: str
    variant: str  # "broken", "fixed", or "symptom" for the verdict itself
    kind: str  # one of KINDS
    since: str  # the release where it is first seen
    previous: str  # the release compared with
    before: str  # what a user saw on `previous`
    after: str  # what a user sees on `since`

    def __str__(self) -> str:
        if self.kind == "symptom-appears":
            return f"symptom since {self.since}"
        if self.kind == "symptom-disappears":
            return f"symptom gone in {self.since}"
        return f"{self.variant}: {self.kind.replace('-', ' ')} in {self.since}: {self.before} -> {self.after}"

    def to_json(self) -> dict:
        return asdict(self)


def between(case: str, device: str, previous: str, since: str, a, b) -> list[Change]:
    """Every change from record ``a`` (on ``previous``) to record ``b`` (on ``since``)."""
    out: list[Change] = []

    def add(variant, kind, before, after):
        out.append(Change(case, device, variant, kind, since, previous, before, after))

    if a.observed is not None and b.observed is not None and a.observed != b.observed:
        add(
            "symptom",
            "symptom-appears" if b.observed else "symptom-disappears",
            "symptom seen" if a.observed else "no symptom",
            "symptom seen" if b.observed else "no symptom",
        )
    fa, fb = a.fingerprints or {}, b.fingerprints or {}
    for variant in ("broken", "fixed"):
        x, y = remask(fa.get(variant)), remask(fb.get(variant))
        if x is None or y is None:
            continue  # a run that did not get that far records nothing to compare
        for kind, before, after in _fingerprint_changes(x, y):
            add(variant, kind, before, after)
    return out


def _error_text(e: dict | None) -> str:
    return "returns" if e is None else f"{e['type']}: {e['message']}"


def _fingerprint_changes(x: dict, y: dict):
    ex, ey = x["error"], y["error"]
    if ex is None and ey is not None:
        yield "starts-raising", "returns", _error_text(ey)
    elif ex is not None and ey is None:
        yield "stops-raising", _error_text(ex), "returns"
    elif ex is not None and ey is not None:
        if ex["type"] != ey["type"]:
            yield "exception-type", _error_text(ex), _error_text(ey)
        elif ex["message"] != ey["message"]:
            yield "message-reworded", ex["message"], ey["message"]
    yield from _warning_changes(x["warnings"], y["warnings"])
    if ex is None and ey is None and not same_value(x["value"], y["value"]):
        yield "value-changed", _short(x["value"]), _short(y["value"])


def _warning_changes(wx: list[dict], wy: list[dict]):
    gone = [w for w in wx if w not in wy]
    new = [w for w in wy if w not in wx]
    for w in list(gone):  # the same message under another category
        twin = next((n for n in new if n["message"] == w["message"]), None)
        if twin is not None:
            gone.remove(w), new.remove(twin)
            yield "warning-category", f"{w['category']}: {w['message']}", f"{twin['category']}: {twin['message']}"
    for w in list(gone):  # the same category, reworded (paired in order)
        twin = next((n for n in new if n["category"] == w["category"]), None)
        if twin is not None:
            gone.remove(w), new.remove(twin)
            yield "warning-reworded", f"{w['category']}: {w['message']}", f"{twin['category']}: {twin['message']}"
    for w in list(gone):  # one of each left, of other categories: the same warning, recategorised and reworded
        twin = next((n for n in new if n["category"] != w["category"]), None)
        if twin is not None and len(gone) == len(new) == 1:
            gone.remove(w), new.remove(twin)
            yield "warning-category", f"{w['category']}: {w['message']}", f"{twin['category']}: {twin['message']}"
    for w in gone:
        yield "warning-removed", f"{w['category']}: {w['message']}", "no such warning"
    for w in new:
        yield "warning-added", "no such warning", f"{w['category']}: {w['message']}"


def same_value(a, b) -> bool:
    """Equal as JSON, with numbers equal within ``REL_TOL`` (and nan equal to nan)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b or math.isclose(a, b, rel_tol=REL_TOL, abs_tol=1e-9)
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    return a == b


def _short(value, limit: int = 160) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"
