"""The notebook magic (``%load_ext torch_pitfalls.watch``) in a real IPython shell: a watched cell
reports the pitfall in it at its line, a correct cell reports nothing, ``%watch on``/``off`` spans
cells, and bad options are refused."""

from __future__ import annotations

import pytest

IPython = pytest.importorskip("IPython")

BROKEN_CELL = """
import torch, torch.nn as nn
w = torch.randn(6, 1, requires_grad=True)
scores = torch.randn(3, 6) @ w
weights = scores.softmax(-1)
(weights * 2).sum().backward()
"""
FIXED_CELL = """
import torch
w = torch.randn(6, 3, requires_grad=True)
weights = (torch.randn(3, 6) @ w).softmax(-1)
(weights * 2).sum().backward()
"""


@pytest.fixture
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    sh = InteractiveShell.instance()
    sh.run_line_magic("load_ext", "torch_pitfalls.watch")
    yield sh
    sh.run_line_magic("unload_ext", "torch_pitfalls.watch")
    InteractiveShell.clear_instance()


def test_a_watched_cell_reports_its_pitfall(shell, capsys):
    shell.run_cell_magic("watch", "", BROKEN_CELL)
    out = capsys.readouterr().out
    assert "[softmax-singleton-axis]" in out, out


def test_a_correct_cell_reports_nothing(shell, capsys):
    shell.run_cell_magic("watch", "", FIXED_CELL)
    out = capsys.readouterr().out
    assert out.strip() == "pitfalls watch: nothing found", out


def test_watch_on_spans_cells_until_off(shell, capsys):
    shell.run_line_magic("watch", "on")
    shell.run_cell(FIXED_CELL)
    shell.run_cell(BROKEN_CELL)
    shell.run_line_magic("watch", "report")
    assert "[softmax-singleton-axis]" in capsys.readouterr().out
    shell.run_line_magic("watch", "off")
    capsys.readouterr()
    shell.run_cell(BROKEN_CELL)  # off: nothing watches it any more
    shell.run_line_magic("watch", "report")
    assert "not on" in capsys.readouterr().out


def test_select_limits_the_detectors(shell, capsys):
    shell.run_cell_magic("watch", "--select target-shape-broadcast", BROKEN_CELL)
    assert "nothing found" in capsys.readouterr().out


def test_bad_options_are_refused(shell):
    with pytest.raises(ValueError, match="%watch"):
        shell.run_line_magic("watch", "sideways")
