"""What ``make bench`` records under the key ``pitfalls`` of ``build/bench.json``, computed from
the benchmark entries of the same run (pure functions of pytest-benchmark's JSON, no torch).

A benchmark that is one half of a broken/fixed pair carries ``extra_info`` ``{"case", "device",
"variant": "broken" | "fixed"}``, and ``peak_bytes`` where a peak-memory ratio applies
(``peak_memory.py``); the harness-cost benchmark carries ``extra_info["harness"]``
(``test_harness_overhead.py``, which says what its seconds are); each of ``pitfalls watch``'s
benchmarks carries ``extra_info["watch"]``, one training step's seconds unwatched, watched and under
``detect_anomaly`` with the ratios (``test_bench_watch_overhead.py``). Other benchmarks are left alone.
"""

from __future__ import annotations

VARIANTS = ("broken", "fixed")
HARNESS_GOAL = 2.0  # pitfalls run on the corpus, as a multiple of the bare floor
RSS_BUDGET_BYTES = 1.5e9  # peak resident memory of a full CPU corpus run
WATCH_GOAL = 1.10  # a training step of a mid-sized model inside `pitfalls watch`, as a multiple of it without


def ratios(benchmarks: list[dict]) -> list[dict]:
    """One row per (case, device, metric) whose broken and fixed halves both ran: the median
    time of each (``time``) and, where both halves measured it, their peak memory."""
    halves: dict[tuple[str, str], dict[str, dict]] = {}
    for bench in benchmarks:
        info = bench.get("extra_info") or {}
        if info.get("variant") not in VARIANTS:
            continue
        pair = halves.setdefault((info["case"], info["device"]), {})
        if info["variant"] in pair:
            raise ValueError(
                f"two {info['variant']} benchmarks for {info['case']} on {info['device']}: "
                f"{pair[info['variant']]['name']} and {bench['name']}"
            )
        pair[info["variant"]] = bench
    rows = []
    for (case, device), pair in halves.items():
        if set(pair) != set(VARIANTS):
            continue  # the other half did not run (deselected or failed): no ratio
        broken, fixed = pair["broken"], pair["fixed"]
        measures = [("time", "s", broken["stats"]["median"], fixed["stats"]["median"])]
        if "peak_bytes" in broken["extra_info"] and "peak_bytes" in fixed["extra_info"]:
            measures.append(
                ("peak_memory", "bytes", broken["extra_info"]["peak_bytes"], fixed["extra_info"]["peak_bytes"])
            )
        for metric, unit, b, f in measures:
            if f <= 0:
                raise ValueError(f"{case} on {device}: the fixed {metric} is {f}, no ratio can be taken")
            rows.append(
                {
                    "case": case,
                    "device": device,
                    "metric": metric,
                    "broken": b,
                    "fixed": f,
                    "unit": unit,
                    "ratio": b / f,
                }
            )
    return sorted(rows, key=lambda r: (r["case"], r["device"], r["metric"]))


def harness_figures(benchmarks: list[dict]) -> dict | None:
    """The harness-cost figures, from the one benchmark that measured them (None if none did)."""
    found = [b["extra_info"]["harness"] for b in benchmarks if "harness" in (b.get("extra_info") or {})]
    if len(found) > 1:
        raise ValueError(f"{len(found)} benchmarks recorded harness figures; expected one")
    return found[0] if found else None


def watch_figures(benchmarks: list[dict]) -> list[dict]:
    """The watcher's cost on each training step measured, by workload."""
    rows = [b["extra_info"]["watch"] for b in benchmarks if "watch" in (b.get("extra_info") or {})]
    return sorted(rows, key=lambda r: r["workload"])


def pitfalls_record(benchmarks: list[dict], torch_version: str, devices: dict, date: str) -> dict:
    record = {"torch": torch_version, "devices": devices, "date": date, "ratios": ratios(benchmarks)}
    harness = harness_figures(benchmarks)
    if harness is not None:
        record["harness"] = harness
    watched = watch_figures(benchmarks)
    if watched:
        record["watch"] = watched
    return record


def summary_lines(record: dict) -> list[str]:
    """The record as the terminal shows it."""
    threads = f"; torch threads: {record['threads']}" if "threads" in record else ""
    lines = [
        f"torch {record['torch']}; " + "; ".join(f"{d}: {name}" for d, name in record["devices"].items()) + threads
    ]
    for r in record["ratios"]:
        lines.append(
            f"  {r['case']:<26} {r['device']:<5} {r['metric']:<12}"
            f" broken {_amount(r['broken'], r['unit']):>11}  fixed {_amount(r['fixed'], r['unit']):>11}"
            f"  ratio {r['ratio']:8.2f}x"
        )
    lines += watch_lines(record.get("watch", []))
    h = record.get("harness")
    if h is None:
        lines.append("  harness cost: not measured in this run")
        return lines
    ratio, clock = h["overhead_ratio"], h.get("clock", "wall")
    lines.append(
        f"  pitfalls run (cpu, whole corpus) {h['corpus_s']:.2f} s; bare floor {h['floor_s']:.2f} s ({clock} time);"
        f" overhead {ratio:.2f}x (goal <= {HARNESS_GOAL:g}x: {'met' if ratio <= HARNESS_GOAL else 'NOT MET'})"
    )
    if "corpus_wall_s" in h:
        lines.append(
            f"    wall time: pitfalls run {h['corpus_wall_s']:.2f} s; floor {h['floor_wall_s']:.2f} s;"
            f" ratio {h['corpus_wall_s'] / h['floor_wall_s']:.2f}x"
        )
    for point in h["scaling"]:
        line = f"    {point['cases']:>3} cases: {point['seconds']:.2f} s, {point['per_case_s']:.3f} s per case"
        if "floor_s" in point:
            line += f"; floor {point['floor_s']:.2f} s, ratio {point['seconds'] / point['floor_s']:.2f}x"
        if "wall_s" in point:
            line += f" (wall {point['wall_s']:.2f} s; floor {point['floor_wall_s']:.2f} s)"
        lines.append(line)
    rss = h["peak_rss_bytes"]
    lines.append(
        f"  peak RSS of a full cpu run {rss / 2**20:.0f} MiB"
        f" (budget {RSS_BUDGET_BYTES / 1e9:g} GB: {'met' if rss < RSS_BUDGET_BYTES else 'NOT MET'})"
    )
    return lines


def watch_lines(rows: list[dict]) -> list[str]:
    if not rows:
        return []
    clock = rows[0].get("clock", "wall")
    lines = [
        "  pitfalls watch: one training step (forward, loss, backward, optimizer step), each side's median"
        f" over interleaved rounds ({clock} time); ratios against the step unwatched"
    ]
    for r in rows:
        goal = r.get("goal")
        met = "" if goal is None else f" (goal <= {goal:g}x: {'met' if r['on_ratio'] <= goal else 'NOT MET'})"
        line = (
            f"    {r['workload']:<16} unwatched {_amount(r['off_s'], 's'):>10}"
            f"  watched {_amount(r['on_s'], 's'):>10} {r['on_ratio']:5.2f}x{met:<28}"
            f"  detect_anomaly {_amount(r['anomaly_s'], 's'):>10} {r['anomaly_ratio']:5.2f}x"
        )
        if "wall_on_ratio" in r:
            line += f"  (wall: {r['wall_on_ratio']:.2f}x, {r['wall_anomaly_ratio']:.2f}x)"
        lines.append(line)
    return lines


def _amount(value: float, unit: str) -> str:
    if unit == "bytes":
        return f"{value:,.0f} B"
    return f"{value * 1e6:,.1f} us" if value < 1e-2 else f"{value * 1e3:,.2f} ms"
