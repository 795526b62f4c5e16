"""Runs one step of an isolated case in a fresh interpreter and writes its result as JSON.

usage: python -m torch_pitfalls.run.worker CASE_FILE DEVICE broken|fixed RESULT_JSON
"""

import json
import os
import sys
from pathlib import Path

from torch_pitfalls.loader import load_case
from torch_pitfalls.run.runner import step_result_json


def main(argv: list[str]) -> int:
    path, device, step, out = argv
    result = step_result_json(load_case(Path(path)), device, step)
    Path(out).write_text(json.dumps(result))
    return 0


if __name__ == "__main__":
    code = main(sys.argv[1:])
    sys.stdout.flush()
    sys.stderr.flush()
    # Skip interpreter teardown: after a device-side assert, CUDA's own exit handlers can abort,
    # and the result is already written.
    os._exit(code)
