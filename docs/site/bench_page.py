"""The page "What the performance pitfalls cost": broken ÷ fixed ratios as a bar chart.

The data is the ``pitfalls`` section of a pytest-benchmark JSON: ``build/bench.json`` (the last
``make bench``) when it has one, else the newest committed ``reports/bench-*.json``. With
neither, the page says no benchmark is recorded and the build goes on.
"""
from __future__ import annotations

import io
import json
from pathlib import Path

from docs.site.text import code, md

RATIO_FIELDS = {"case": str, "device": str, "metric": str, "unit": str, "broken": (int, float),
                "fixed": (int, float), "ratio": (int, float)}


class BenchError(ValueError):
    """A benchmark file that cannot be read; the message names the file and the field."""


def choose_bench(build_json: Path, reports_dir: Path) -> tuple[Path | None, dict | None, list[str]]:
    """(file, its pitfalls section, notes about files passed over)."""
    notes = []
    if build_json.is_file():
        section = _pitfalls_section(build_json)
        if section is not None:
            return build_json, section, notes
        notes.append(f"{code(build_json.name)} has no `pitfalls` section (an older `make bench`), so it is not shown.")
    committed = []
    for path in sorted(reports_dir.glob("bench-*.json")):
        section = _pitfalls_section(path)
        if section is None:
            notes.append(f"{code(path.name)} has no `pitfalls` section, so it is not shown.")
        else:
            committed.append((section["date"], path.name, path, section))
    if committed:
        _, _, path, section = max(committed, key=lambda t: (t[0], t[1]))
        return path, section, notes
    return None, None, notes


def _pitfalls_section(path: Path) -> dict | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise BenchError(f"{path}: cannot be read as JSON ({type(exc).__name__}: {exc})") from None
    section = data.get("pitfalls") if isinstance(data, dict) else None
    if section is None:
        return None
    _check(path, section)
    return section


def _check(path: Path, section) -> None:
    def bad(where, problem):
        raise BenchError(f"{path}: pitfalls.{where}: {problem}")

    if not isinstance(section, dict):
        bad("", "must be an object")
    for key, kind in (("torch", str), ("date", str), ("devices", dict), ("ratios", list)):
        if not isinstance(section.get(key), kind):
            bad(key, f"missing or not a {kind.__name__}")
    for i, entry in enumerate(section["ratios"]):
        if not isinstance(entry, dict):
            bad(f"ratios[{i}]", "must be an object")
        for key, kind in RATIO_FIELDS.items():
            if not isinstance(entry.get(key), kind) or isinstance(entry.get(key), bool):
                bad(f"ratios[{i}].{key}", "missing or of the wrong type")


def chart_svg(section: dict) -> bytes:
    """Horizontal bars, one per case × device × metric, on a log scale when ratios spread."""
    from matplotlib.figure import Figure

    ratios = section["ratios"]
    labels = [f"{r['case']} · {r['device']} · {r['metric']}" for r in ratios]
    values = [r["ratio"] for r in ratios]
    fig = Figure(figsize=(9, 1.2 + 0.42 * len(ratios)), layout="constrained")
    ax = fig.add_subplot()
    colors = ["#c0392b" if r["metric"] == "time" else "#2471a3" for r in ratios]
    ax.barh(range(len(values)), values, color=colors)
    ax.set_yticks(range(len(values)), labels)
    ax.invert_yaxis()
    if max(values) / max(min(values), 1e-12) > 20:
        ax.set_xscale("log")
    ax.axvline(1.0, color="black", linewidth=0.8)
    for i, v in enumerate(values):
        ax.annotate(f"{v:.3g}×", (v, i), xytext=(3, 0), textcoords="offset points", va="center", fontsize=8)
    ax.set_xlabel("broken ÷ fixed (time: red, peak memory: blue)")
    ax.set_title(f"torch {section['torch']} · {section['date']}", fontsize=10)
    buf = io.BytesIO()
    fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def performance_page(path: Path | None, section: dict | None, notes: list[str], case_ids: set[str]) -> tuple[str, bytes | None]:
    """(the page's Markdown, the chart's SVG or None)."""
    out = ["# What the performance pitfalls cost\n",
           "Each performance case is timed (or its peak memory measured) broken and fixed, by "
           "`make bench`; a bar is broken ÷ fixed, so 10× means the pitfall costs ten times the fix.\n"]
    out.extend(f"{n}\n" for n in notes)
    if section is None:
        out.append("No benchmark recorded: run `make bench` (writes `build/bench.json`), or commit "
                   "one as `reports/bench-<torch>-<device>.json`.\n")
        return "\n".join(out), None
    devices = ", ".join(f"{d}: {name}" for d, name in section["devices"].items())
    out.append(f"From {code(path.name)}: torch {code(section['torch'])}, run on {md(devices)}, {md(section['date'])}.\n")
    if not section["ratios"]:
        out.append("The run recorded no ratio.\n")
        return "\n".join(out), None
    out.append("![Broken ÷ fixed per case, device and metric](performance.svg)\n")
    out.append("| case | device | metric | broken | fixed | broken ÷ fixed |\n|---|---|---|---|---|---|")
    for r in section["ratios"]:
        name = f"{{doc}}`{r['case']} <cases/{r['case']}>`" if r["case"] in case_ids else md(r["case"])
        out.append(f"| {name} | {md(r['device'])} | {md(r['metric'])} | "
                   f"{r['broken']:.3g} {md(r['unit'])} | {r['fixed']:.3g} {md(r['unit'])} | {r['ratio']:.3g}× |")
    overhead = section.get("harness", {}).get("overhead_ratio") if isinstance(section.get("harness"), dict) else None
    if isinstance(overhead, (int, float)):
        out.append(f"\nThe harness's own cost in that run: {overhead:.3g}× a bare interpreter running the same variants.")
    return "\n".join(out) + "\n", chart_svg(section)
