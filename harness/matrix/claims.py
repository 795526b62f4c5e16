"""What a case's claims rest on, in words: observed by the matrix, inferred from a source, or
unverified — for ``pitfalls show``, each case page and the home page.

Nothing here runs a case: it reads the recorded matrix (``torch_pitfalls.matrix``) and the case's
``Affects`` rules. A release range is written as the matrix's own releases ("1.13.1–2.15.0").
"""

from __future__ import annotations

import re

from torch_pitfalls.case import DEVICES, Case
from torch_pitfalls.matrix import NOT_OBSERVED, STALE, Matrix, device_kind
from torch_pitfalls.matrix.changes import same_value
from torch_pitfalls.run.fingerprint import mask, remask
from torch_pitfalls.versions import parse_range, release_of


def spans(chosen: list[str], releases: list[str]) -> str:
    """``chosen`` (a subset of ``releases``, in order) as runs of consecutive releases."""
    runs, current = [], []
    for v in releases:
        if v in chosen:
            current.append(v)
        elif current:
            runs.append(current)
            current = []
    if current:
        runs.append(current)
    return ", ".join(r[0] if len(r) == 1 else f"{r[0]}–{r[-1]}" for r in runs)


def device_claims(case: Case, m: Matrix, device: str) -> list[str]:
    """One line per kind of evidence on ``device``."""
    if device not in m.devices:
        what = "the symptom" if device_kind(device) in case.devices else "the contrast"
        return [f"{device}: {what} is not observed (no {device} report is recorded)"]
    row = m.row(case.id, device)

    def by(*statuses):
        return [c.version for c in row if c.status in statuses]

    lines = []
    seen = by("reproduced")
    absent = by("absent")
    if seen:
        proxy = next((r.proxy for r in case.rules if r.proxy and r.device == device_kind(device)), None)
        lines.append(
            f"{device}: symptom observed on {spans(seen, m.versions)}"
            + (f" (through a proxy: {proxy})" if proxy else "")
        )
    if absent:
        lines.append(f"{device}: observed absent, as declared, on {spans(absent, m.versions)}")
    unverified = [c for c in row if c.status == "unverified"]
    if unverified:
        reasons = sorted({reason_of(c.record.detail) for c in unverified})
        lines.append(
            f"{device}: unverified on {spans([c.version for c in unverified], m.versions)}: {'; '.join(reasons)}"
        )
    failing = by("mismatch", "fix-failed", "error")
    if failing:
        lines.append(f"{device}: failing on {spans(failing, m.versions)} (see the matrix)")
    gaps = by(STALE, NOT_OBSERVED, "skipped")
    if gaps:
        lines.append(f"{device}: not observed on {spans(gaps, m.versions)} (stale, missing or skipped records)")
    return lines


def reason_of(detail: str) -> str:
    """An unverified record's reason without what differs per release: "the symptom is not
    expected on torch 2.0.1+cu117 (affects <1.7), and …" -> "the symptom is not expected here
    (affects <1.7)"."""
    reason = detail.split(", and the broken result")[0].split(": nothing here")[0]
    return re.sub(r" on torch \S+", " here", reason)


def bound_claims(case: Case, m: Matrix) -> list[str]:
    """Where each rule's lower bound comes from: observed inside the matrix, or read somewhere."""
    first = m.versions[0] if m.versions else None
    out = []
    for rule in case.rules:
        label = (
            f"{rule.versions or '*'}"
            + (f" on {rule.device}" if rule.device else "")
            + (f" ({rule.form})" if rule.form else "")
        )
        low = parse_range(rule.versions).lower_bound if rule.versions else None  # the range's own answer
        if rule.since:
            out.append(f"{label}: before {first or 'the matrix'}, inferred, not observed; the source: {rule.since}")
        elif low is None:
            out.append(f"{label}: no known lower bound")
        else:
            devices = [rule.device] if rule.device else [d for d in case.devices if d in m.devices]
            cells = [c for d in devices for c in m.row(case.id, d)]
            before = [c for c in cells if release_of(c.version) < low]
            after = [c for c in cells if release_of(c.version) >= low]
            held = all(c.status in ("reproduced", "absent", "unverified") for c in cells)
            if before and after and held:
                out.append(f"{label}: the bound is observed: bracketed by {before[-1].version} and {after[0].version}")
            else:
                out.append(f"{label}: the bound lies inside the matrix but is not bracketed by passing records yet")
    return out


def observed_bounds(case: Case, m: Matrix, device: str, versions=None) -> list[tuple]:
    """(rule, the cell of its first release, the cell of the release before) for every rule of
    ``device`` whose lower bound the matrix can bracket (a range, not read in ``since``); a rule
    that admits no release is (rule, None, None); one starting at the first release is left out,
    nothing brackets it. An upgrade case's boundary as the records show it."""
    versions = list(versions or m.versions)
    out = []
    for rule in case.rules:
        if rule.device not in (None, device) or rule.versions is None or rule.since:
            continue
        first = next((i for i, v in enumerate(versions) if rule.matches(v, device)), None)
        if first is None:
            out.append((rule, None, None))
        elif first > 0:
            out.append((rule, m.cell(case.id, versions[first], device), m.cell(case.id, versions[first - 1], device)))
    return out


def all_claims(case: Case, m: Matrix) -> list[str]:
    lines = []
    # this project's devices, then contributed ones (cuda:<model>); a kind no report covers at all
    # is said to be not observed
    covered = {device_kind(d) for d in m.devices}
    for device in [*(d for d in DEVICES if d in m.devices or d not in covered), *(d for d in m.devices if ":" in d)]:
        lines.extend(device_claims(case, m, device))
    return lines + bound_claims(case, m)


def what_you_see(m: Matrix, case_id: str, device: str, variant: str = "broken") -> list[tuple[str, str]]:
    """(release span, what the variant did there), for runs of releases that look the same to a
    user: "what you will see on your torch"."""
    groups: list[tuple[list[str], dict]] = []
    for cell in m.row(case_id, device):
        fp = remask(
            (cell.record.fingerprints or {}).get(variant)
            if cell.record is not None and cell.status not in (STALE, NOT_OBSERVED)
            else None
        )
        if fp is None:
            continue
        if groups and same_value(groups[-1][1], fp):  # numbers within the tolerance of a change
            groups[-1][0].append(cell.version)
        else:
            groups.append(([cell.version], fp))
    return [(spans(vs, m.versions), _seen(fp)) for vs, fp in groups]


def _seen(fp: dict) -> str:
    parts = []
    if fp["error"] is not None:
        parts.append(f"raises {fp['error']['type']}: {fp['error']['message']}")
    parts.extend(f"warns {w['category']}: {w['message']}" for w in fp["warnings"])
    if fp["error"] is None:
        value = fp["value"]
        parts.append("returns " + mask(str(value)) if value is not None else "returns None")
    return "; ".join(parts)
