"""The page "What the performance pitfalls cost": broken ÷ fixed ratios as a bar chart.

The data is the ``pitfalls`` section of a pytest-benchmark JSON: ``build/bench.json`` (the last
``make bench``) when it has one, else the newest committed ``reports/bench-*.json`` of the CPU
alone. A committed run of a device that one did not measure (a GPU's) follows in a section of its
own. With none, the page says no benchmark is recorded and the build goes on.
"""

from __future__ import annotations

import ast
import io
import json
from pathlib import Path

from docs.site.text import code, md

RATIO_FIELDS = {
    "case": str,
    "device": str,
    "metric": str,
    "unit": str,
    "broken": (int, float),
    "fixed": (int, float),
    "ratio": (int, float),
}


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
    if committed:  # the newest run of the CPU lane; a GPU's run gets its own section (other_devices)
        cpu_only = [c for c in committed if {r["device"] for r in c[3]["ratios"]} <= {"cpu"}]
        _, _, path, section = max(cpu_only or committed, key=lambda t: (t[0], t[1]))
        return path, section, notes
    return None, None, notes


def other_devices(chosen: Path | None, section: dict | None, reports_dir: Path) -> list[tuple[Path, dict]]:
    """Committed benchmarks of a device the chosen one did not measure (a GPU's run beside the
    CPU's): the newest for each such device kind, newest first."""
    measured = {r["device"] for r in section["ratios"]} if section else set()
    newest: dict[str, tuple[Path, dict]] = {}
    for path in sorted(reports_dir.glob("bench-*.json")):
        other = _pitfalls_section(path) if path != chosen else None
        for kind in sorted({r["device"] for r in other["ratios"]} - measured) if other else ():
            if kind not in newest or (other["date"], path.name) > (newest[kind][1]["date"], newest[kind][0].name):
                newest[kind] = (path, other)
    unique = {p: sec for p, sec in newest.values()}
    return sorted(unique.items(), key=lambda item: (item[1]["date"], item[0].name), reverse=True)


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


SLOWER = 0.95  # a time ratio below this: the fix is slower (around 1 is the timer's noise)


def fix_cost_notes(bench_dir: Path) -> dict[str, str]:
    """case id -> why its fix costs time: the ``WHY_THE_FIX_COSTS`` of its benchmark module
    (``benchmarks/test_bench_*.py``, read without importing it), said under a time ratio below ``SLOWER``."""
    notes = {}
    for path in sorted(Path(bench_dir).glob("test_bench_*.py")):
        values = {}
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
                if node.targets[0].id in ("GROUP", "WHY_THE_FIX_COSTS"):
                    values[node.targets[0].id] = ast.literal_eval(node.value)
        if "WHY_THE_FIX_COSTS" in values and "GROUP" in values:
            notes[values["GROUP"]] = values["WHY_THE_FIX_COSTS"]
    return notes


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
    from matplotlib import rc_context

    with rc_context({"svg.hashsalt": "torch-pitfalls"}):  # the same ids every build: two builds compare equal
        fig.savefig(buf, format="svg", metadata={"Date": None})
    return buf.getvalue()


def performance_page(
    path: Path | None,
    section: dict | None,
    notes: list[str],
    case_ids: set[str],
    others: list[tuple[Path, dict]] = (),
    why: dict[str, str] | None = None,
) -> tuple[str, dict[str, bytes]]:
    """(the page's Markdown, its charts' SVGs by file name). ``others``: benchmarks of devices the
    chosen one did not measure (``other_devices``), each in a section of its own; ``why``: why a
    case's fix costs time (``fix_cost_notes``), said under a time ratio below ``SLOWER``."""
    out = [
        "# What the performance pitfalls cost\n",
        "Each performance case is timed (or its peak memory measured) broken and fixed, by "
        "`make bench`; a bar is broken ÷ fixed, so 10× means the pitfall costs ten times the fix.\n",
    ]
    out.extend(f"{n}\n" for n in notes)
    if section is None:
        out.append(
            "No benchmark recorded: run `make bench` (writes `build/bench.json`), or commit "
            "one as `reports/bench-<torch>-<device>.json`.\n"
        )
        return "\n".join(out), {}
    charts = {}
    out.extend(_run_section(path, section, case_ids, "performance.svg", charts, why or {}))
    overhead = section.get("harness", {}).get("overhead_ratio") if isinstance(section.get("harness"), dict) else None
    if section["ratios"] and isinstance(overhead, (int, float)):
        out.append(
            f"\nThe harness's own cost in that run: {overhead:.3g}× a bare interpreter running the same variants."
        )
    for i, (other_path, other) in enumerate(others, start=2):
        kinds = ", ".join(sorted({r["device"] for r in other["ratios"]} - {"cpu"})) or "cpu"
        out.append(f"\n## On {md(kinds)}\n")
        out.extend(_run_section(other_path, other, case_ids, f"performance-{i}.svg", charts, why or {}))
    return "\n".join(out) + "\n", charts


def _run_section(
    path: Path, section: dict, case_ids: set[str], svg_name: str, charts: dict, why: dict[str, str]
) -> list[str]:
    """Where one benchmark ran, its chart (added to ``charts``) and its table of ratios."""
    devices = ", ".join(f"{d}: {name}" for d, name in section["devices"].items())
    out = [f"From {code(path.name)}: torch {code(section['torch'])}, run on {md(devices)}, {md(section['date'])}.\n"]
    if not section["ratios"]:
        return out + ["The run recorded no ratio.\n"]
    charts[svg_name] = chart_svg(section)
    out.append(f"![Broken ÷ fixed per case, device and metric]({svg_name})\n")
    out.append("| case | device | metric | broken | fixed | broken ÷ fixed |\n|---|---|---|---|---|---|")
    for r in section["ratios"]:
        name = f"{{doc}}`{r['case']} <cases/{r['case']}>`" if r["case"] in case_ids else md(r["case"])
        out.append(
            f"| {name} | {md(r['device'])} | {md(r['metric'])} | "
            f"{r['broken']:.3g} {md(r['unit'])} | {r['fixed']:.3g} {md(r['unit'])} | {r['ratio']:.3g}× |"
        )
    slower = [r for r in section["ratios"] if r["ratio"] < SLOWER and r["metric"] == "time"]
    if slower:
        out.append("\nWhere the fix is clearly the slower of the two:\n")
    for r in slower:
        reason = why.get(r["case"], "the case's page says what the fix buys instead")
        out.append(f"- {md(r['case'])} on {md(r['device'])} ({r['ratio']:.3g}×): {md(reason)}")
    return out
