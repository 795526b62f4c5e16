"""Fixtures of the harness's own tests."""
from __future__ import annotations

import os

import pytest

from planting import ROOT, Corpus

pytest_plugins = ["pytester"]


@pytest.fixture
def corpus(tmp_path) -> Corpus:
    return Corpus(tmp_path)


@pytest.fixture
def planted(pytester, monkeypatch) -> Corpus:
    """A corpus inside pytester's directory, run with ``pytester.runpytest_subprocess``."""
    monkeypatch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")])))
    return Corpus(pytester.path)

