"""The detectors on code they were not written from: each pitfall re-spelled as user scripts
write it (bound names, modules, keywords, loops, helpers), and correct near-misses
(tests/watch/variants.py). Run as a script, as ``pitfalls watch`` runs one."""

from __future__ import annotations

import warnings
from collections import Counter
from pathlib import Path

import pytest
from variants import PRELUDE, PROGRAMS

from torch_pitfalls.watch import watch
from torch_pitfalls.watch.cli import run_program
from torch_pitfalls.watch.detectors import all_detectors


def run_watched(tmp_path: Path, name: str, body: str):
    script = tmp_path / f"{name}.py"
    script.write_text(PRELUDE + body, encoding="utf-8")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch(explain=False) as w:
            status, exc = run_program(str(script), [], as_module=False)
    assert (status, exc) == (0, None), f"{name} itself failed"
    return script, w


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_variant(tmp_path, name):
    expected, body = PROGRAMS[name]
    script, w = run_watched(tmp_path, name, body)
    assert w.errors == []
    if expected is None:
        assert w.findings == [], [f.as_text() for f in w.findings]
        return
    assert {f.case for f in w.findings} == {expected}, [f.as_text() for f in w.findings]
    lines = body.count("\n") + PRELUDE.count("\n")
    for f in w.findings:  # at a line of the user's script
        assert Path(f.path).resolve() == script.resolve() and 0 < f.line <= lines + 1, (f.path, f.line)


def test_every_sound_detector_has_its_variants():
    """At least three re-spellings and two correct near-misses per sound detector."""
    sound = {d.case for d in all_detectors() if not d.pedantic}
    pitfalls = Counter(case for case, _ in PROGRAMS.values() if case)
    assert set(pitfalls) == sound and min(pitfalls.values()) >= 3, pitfalls
    near = Counter(name.split("-")[0] for name, (case, _) in PROGRAMS.items() if case is None)
    assert sum(near.values()) >= 2 * len(sound)
