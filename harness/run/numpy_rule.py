"""The NumPy a torch release needs beside it: the one rule the Makefile and the version matrix
share (standard library only, so the Makefile can ask it before anything is installed).

torch wheels before 2.3 were built against NumPy 1.x: beside NumPy 2 they print "Failed to
initialize NumPy" at import, and every case that touches NumPy then fails for the environment's
sake, not its own.

    python harness/run/numpy_rule.py 1.13.1    # prints numpy<2 (nothing for 2.3 and later)
"""

from __future__ import annotations

import re
import sys

FIRST_BUILT_FOR_NUMPY_2 = (2, 3)


def numpy_requirement(torch_version: str) -> str | None:
    """``"numpy<2"`` for a torch release built against NumPy 1.x, else None."""
    found = re.match(r"(\d+)\.(\d+)", torch_version)
    if not found:
        raise ValueError(f"{torch_version!r} is not a torch version such as 2.4.1")
    return "numpy<2" if (int(found[1]), int(found[2])) < FIRST_BUILT_FOR_NUMPY_2 else None


if __name__ == "__main__":
    try:
        print(numpy_requirement(sys.argv[1]) or "")
    except (IndexError, ValueError) as exc:
        print(f"numpy_rule: {exc or 'usage: numpy_rule.py TORCH_VERSION'}", file=sys.stderr)
        sys.exit(2)
