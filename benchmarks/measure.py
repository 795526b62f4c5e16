"""Runs a command and writes its wall seconds, CPU seconds and peak RSS to a JSON file.

usage: python benchmarks/measure.py RESULT_JSON COMMAND ...

A separate, small process on purpose: a child's ``ru_maxrss`` counts the memory of the process
it was forked from until it execs, so a command started straight from the benchmark's pytest
process (hundreds of MB, torch imported) would report at least pytest's own size. Forked from
this small interpreter, the command's peak is its own. ``ru_maxrss`` from ``wait4`` is the
largest of the command and every child it waited for, not their sum. The command's output goes
where this process's goes; its exit status is this process's.
"""

import json
import os
import subprocess
import sys
import time

out, cmd = sys.argv[1], sys.argv[2:]
started = time.perf_counter()
proc = subprocess.Popen(cmd)
_, status, usage = os.wait4(proc.pid, 0)
seconds = time.perf_counter() - started
proc.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here, not by Popen
with open(out, "w") as fh:
    json.dump(
        {"seconds": seconds, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_bytes": usage.ru_maxrss * 1024}, fh
    )  # Linux reports kilobytes
sys.exit(code if code >= 0 else 128 - code)
