"""The project's own code held to what it asks of others: `ruff check` (pyflakes, pycodestyle's
errors, bugbear, import order, complexity) and `ruff format`, under pyproject's [tool.ruff]."""

import subprocess
import sys

from planting import ROOT


def ruff(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ruff", *args], cwd=ROOT, capture_output=True, text=True)


def test_ruff_check_finds_nothing():
    done = ruff("check", "--output-format", "concise", ".")
    assert done.returncode == 0, done.stdout + done.stderr


def test_ruff_format_would_change_nothing():
    done = ruff("format", "--check", ".")
    assert done.returncode == 0, done.stdout + done.stderr
