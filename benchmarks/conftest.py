"""Adds the key ``pitfalls`` (ratios of broken/fixed pairs, the harness's cost) to the benchmark
JSON, and prints it at the end of the run. The figures come from ``summary.py``."""

import datetime as dt

import pytest
import torch
from summary import pitfalls_record, summary_lines

from torch_pitfalls.run.devices import device_names

_RECORD = pytest.StashKey[dict]()

# One intra-op thread for the pairs timed in this process. On a machine with few cores shared
# with other work, a second thread stalls every parallel region until the scheduler gives it a
# core back: a 50 us forward was seen to take 30 ms for a whole benchmark's rounds. Both halves
# of a pair run alike, and the thread count is recorded with the ratios.
torch.set_num_threads(1)


def pytest_benchmark_update_json(config, benchmarks, output_json):
    date = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    record = pitfalls_record(output_json["benchmarks"], torch.__version__, device_names(), date)
    record["threads"] = torch.get_num_threads()  # torch's intra-op threads the pairs ran with
    output_json["pitfalls"] = record
    for bench in output_json["benchmarks"]:  # every round's raw timing: megabytes nobody reads
        bench["stats"].pop("data", None)
    config.stash[_RECORD] = record


@pytest.hookimpl(trylast=True)  # after pytest-benchmark's tables
def pytest_terminal_summary(terminalreporter, config):
    record = config.stash.get(_RECORD, None)
    if record is None:
        return  # built with the JSON only: `--benchmark-json PATH`, as `make bench` runs it
    terminalreporter.section("pitfalls: broken/fixed ratios and the harness's cost")
    for line in summary_lines(record):
        terminalreporter.write_line(line)
