"""``pitfalls lint --upgrade FROM TO PATH...``: the findings in your code whose case's observed
behaviour changes between two releases, grouped by the release where each change happens.

The changes are the recorded matrix's (``reports/``, what ``pitfalls upgrade FROM TO`` reads:
harness/matrix/upgrade.py), never run here: a finding is listed under each release in (FROM, TO]
where one of its rule's cases changes, with what changes (the symptom appears, a variant starts
raising, a warning is added, ...).
"""

from __future__ import annotations

from packaging.version import InvalidVersion, Version


def check_span(start: str, end: str, recorded: list[str], usage_error) -> None:
    """FROM and TO must be recorded releases of the matrix, FROM the older."""
    for name, version in (("FROM", start), ("TO", end)):
        try:
            Version(version)
        except InvalidVersion:
            raise usage_error(f"--upgrade {name} {version!r} is not a version (e.g. 2.3.1)") from None
        if version not in recorded:
            raise usage_error(
                f"--upgrade {name} {version} is not a release of the recorded matrix (recorded: {', '.join(recorded)})"
            )
    if Version(start) >= Version(end):
        raise usage_error(f"--upgrade FROM {start} must be an older release than TO {end}")


def upgrade_view(findings, rules_by_id: dict, result: dict) -> dict:
    """The findings of ``findings`` whose cases change in ``result`` (``torch_pitfalls.matrix.upgrade``),
    by release: ``{"from", "to", "releases": [{"release", "findings": [finding + changes]}]}``."""
    changes = {case["case"]: case["changes"] for case in result["cases"]}
    by_release: dict[str, list[dict]] = {}
    for f in findings:
        rule = rules_by_id.get(f.rule)
        if rule is None:
            continue
        for case in rule.cases:
            for ch in changes.get(case, ()):
                entries = by_release.setdefault(ch["since"], [])
                entry = next((e for e in entries if e["finding"] is f), None)
                if entry is None:
                    entry = {"finding": f, "changes": []}
                    entries.append(entry)
                entry["changes"].append(ch)
    releases = [
        {"release": v, "findings": [{**e["finding"].to_json(), "changes": e["changes"]} for e in by_release[v]]}
        for v in sorted(by_release, key=Version)
    ]
    listed = {id(e["finding"]) for v in by_release.values() for e in v}
    return {
        "from": result["from"],
        "to": result["to"],
        "device": result["device"],
        "releases": releases,
        "findings": len(listed),
        "not_observed": result["not_observed"],
    }


def _short(text: str, limit: int = 100) -> str:
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _change_text(ch: dict) -> str:
    if ch["kind"] in ("symptom-appears", "symptom-disappears"):
        return f"{ch['case']}: {ch['kind'].replace('-', ' ')}"
    return (
        f"{ch['case']}: {ch['variant']} {ch['kind'].replace('-', ' ')}: {_short(ch['before'])} -> {_short(ch['after'])}"
    )


def text(view: dict) -> str:
    head = f"torch {view['from']} -> {view['to']} on {view['device']} (the recorded matrix)"
    if not view["releases"]:
        return f"{head}: no finding here has a case whose behaviour changes in between"
    lines = [f"{head}: {view['findings']} finding{'s' if view['findings'] != 1 else ''} whose case changes"]
    for group in view["releases"]:
        lines.append(f"in torch {group['release']}:")
        for f in group["findings"]:
            lines.append(f"  {f['path']}:{f['line']}:{f['col']}: {f['rule']} {f['message']}")
            lines.extend(f"      {_change_text(ch)}" for ch in f["changes"])
    return "\n".join(lines)
