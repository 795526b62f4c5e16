"""The ratios ``make bench`` records (benchmarks/summary.py), from hand-made benchmark entries:
pure arithmetic on pytest-benchmark's JSON, no timing."""

import importlib.util
from pathlib import Path

import pytest

_PATH = Path(__file__).resolve().parents[2] / "benchmarks" / "summary.py"
_spec = importlib.util.spec_from_file_location("bench_summary", _PATH)
summary = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(summary)


def bench(name, median, **extra_info):
    return {"name": name, "stats": {"median": median, "mean": 99.0}, "extra_info": extra_info}


PAIRS = [
    bench("fixed-cpu", 0.5, case="c", device="cpu", variant="fixed", peak_bytes=1000),
    bench("broken-cuda", 3.0, case="c", device="cuda", variant="broken"),
    bench("docs-build", 7.0),  # not part of any pair
    bench("broken-cpu", 2.0, case="c", device="cpu", variant="broken", peak_bytes=4000),
    bench("fixed-cuda", 1.5, case="c", device="cuda", variant="fixed"),
]


def test_pairs_are_matched_by_case_and_device_and_divided_broken_over_fixed():
    assert summary.ratios(PAIRS) == [
        {
            "case": "c",
            "device": "cpu",
            "metric": "peak_memory",
            "broken": 4000,
            "fixed": 1000,
            "unit": "bytes",
            "ratio": 4.0,
        },
        {"case": "c", "device": "cpu", "metric": "time", "broken": 2.0, "fixed": 0.5, "unit": "s", "ratio": 4.0},
        {"case": "c", "device": "cuda", "metric": "time", "broken": 3.0, "fixed": 1.5, "unit": "s", "ratio": 2.0},
    ]


def test_a_half_without_its_other_half_gives_no_ratio():
    assert summary.ratios([PAIRS[0], PAIRS[1]]) == []


def test_peak_memory_needs_both_halves_to_have_measured_it():
    lone_peak = [
        bench("b", 2.0, case="c", device="cpu", variant="broken", peak_bytes=10),
        bench("f", 1.0, case="c", device="cpu", variant="fixed"),
    ]
    assert [r["metric"] for r in summary.ratios(lone_peak)] == ["time"]


def test_two_benchmarks_claiming_the_same_half_are_refused():
    with pytest.raises(ValueError, match="two broken benchmarks for c on cpu: broken-cpu and again"):
        summary.ratios(PAIRS + [bench("again", 1.0, case="c", device="cpu", variant="broken")])


def test_a_fixed_half_of_zero_is_refused_not_divided():
    zero = [
        bench("b", 1.0, case="c", device="cpu", variant="broken", peak_bytes=5),
        bench("f", 1.0, case="c", device="cpu", variant="fixed", peak_bytes=0),
    ]
    with pytest.raises(ValueError, match="c on cpu: the fixed peak_memory is 0"):
        summary.ratios(zero)


HARNESS = {
    "overhead_ratio": 2.5,
    "corpus_s": 25.0,
    "floor_s": 10.0,
    "scaling": [{"cases": 4, "seconds": 2.0, "per_case_s": 0.5}],
    "peak_rss_bytes": 2e9,
}


def test_the_record_carries_the_harness_figures_and_the_summary_flags_missed_goals():
    record = summary.pitfalls_record(
        PAIRS + [bench("overhead", 60.0, harness=HARNESS)], "2.13.0", {"cpu": "some cpu"}, "2026-01-01T00:00:00+00:00"
    )
    assert record["harness"] is HARNESS and len(record["ratios"]) == 3
    text = "\n".join(summary.summary_lines(record))
    assert "overhead 2.50x (goal <= 2x: NOT MET)" in text
    assert "peak RSS of a full cpu run 1907 MiB (budget 1.5 GB: NOT MET)" in text
    assert "4 cases: 2.00 s, 0.500 s per case" in text


def test_without_harness_figures_the_record_has_no_harness_key():
    assert "harness" not in summary.pitfalls_record(PAIRS, "2.13.0", {}, "d")


def watched(workload, on_ratio, goal):
    return bench(
        f"watch-{workload}",
        1.0,
        watch={
            "workload": workload,
            "steps": 10,
            "rounds": 20,
            "threads": 1,
            "off_s": 0.004,
            "on_s": 0.004 * on_ratio,
            "anomaly_s": 0.008,
            "on_ratio": on_ratio,
            "anomaly_ratio": 2.0,
            "goal": goal,
        },
    )


def test_the_record_carries_the_watchers_cost_and_the_summary_flags_a_missed_goal():
    record = summary.pitfalls_record(
        PAIRS + [watched("mlp-b", 1.25, 1.1), watched("cnn", 1.05, 1.1), watched("mlp-small", 2.5, None)],
        "2.13.0",
        {},
        "d",
    )
    assert [r["workload"] for r in record["watch"]] == ["cnn", "mlp-b", "mlp-small"]
    lines = [line for line in summary.summary_lines(record) if line.startswith("    ") and "unwatched" in line]
    assert len(lines) == 3
    assert "1.05x (goal <= 1.1x: met)" in lines[0] and "detect_anomaly" in lines[0]
    assert "1.25x (goal <= 1.1x: NOT MET)" in lines[1]
    assert "2.50x" in lines[2] and "goal" not in lines[2]
    assert "watch" not in summary.pitfalls_record(PAIRS, "2.13.0", {}, "d")
