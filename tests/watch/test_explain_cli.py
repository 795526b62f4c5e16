"""``pitfalls explain``: every error and warning of the corpus that the explainer claims, pasted as
a traceback or a warning line, names its case; a message no case records, and text with no message
at all, are refused plainly."""

from __future__ import annotations

import importlib.util

from planting import ROOT, runs_other_interpreters, variant_run

from torch_pitfalls.cli import main
from torch_pitfalls.loader import load_cases
from torch_pitfalls.watch.explain import Explainer
from torch_pitfalls.watch.explain_cli import messages

CASES = {lc.id: lc for lc in load_cases(ROOT / "cases")}


def pasted(obs) -> str:
    """What a terminal shows of a run: its warnings as Python prints them, then its traceback."""
    lines = [f"train.py:7: {w.category.__name__}: {w.message}" for w in obs.warnings]
    if obs.error is not None:
        lines += ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>', "    main()"]
        lines.append(f"{type(obs.error).__module__}.{type(obs.error).__name__}: {obs.error}")
    return "\n".join(lines) + "\n"


def claimed() -> list[str]:
    """The cases the explainer names on this torch whose broken run can be made in this process."""
    ids = Explainer.for_installed_torch().explained_cases()
    return sorted(
        c
        for c in ids
        if not runs_other_interpreters(CASES[c].path)
        and "cpu" not in CASES[c].case.isolate
        and all(importlib.util.find_spec(m.split(".")[0]) for m in CASES[c].case.requires)
    )


def test_every_claimed_case_is_named_from_its_pasted_output(capsys):
    ids = claimed()
    assert len(ids) >= 40, ids
    missed = []
    for case_id in ids:
        text = pasted(variant_run(CASES[case_id], "broken"))
        status = main(["explain", text])
        out = capsys.readouterr().out
        if status != 0 or f"\n  {case_id}: " not in f"\n{out}":
            missed.append(f"{case_id} (exit {status}): {out[:300]}")
    assert not missed, "\n".join(missed)


def test_a_traceback_on_stdin_with_a_multiline_message(monkeypatch, capsys):
    text = (
        "Traceback (most recent call last):\n"
        '  File "train.py", line 3, in <module>\n'
        "    loss.backward()\n"
        "RuntimeError: Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values of the graph are freed when you call "
        ".backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a "
        "second time or if you need to access saved tensors after calling backward.\n"
    )
    monkeypatch.setattr("sys.stdin", __import__("io").StringIO(text))
    assert main(["explain"]) == 0
    out = capsys.readouterr().out
    assert "\n  backward-twice: " in out and "page: cases/backward-twice.html" in out
    said = messages('RuntimeError: Error(s) in loading state_dict for Net:\n\tMissing key(s): "w".\n\nnext')
    assert [(s.kind, s.name, s.text) for s in said] == [
        ("error", "RuntimeError", 'Error(s) in loading state_dict for Net:\n\tMissing key(s): "w".')
    ]


def test_what_no_case_records_is_said_plainly(capsys):
    assert main(["explain", "ValueError: a message of the user's own"]) == 1
    assert "no case of the corpus records this message" in capsys.readouterr().out
    assert main(["explain", "no message here at all"]) == 2
    assert "no exception or warning line in the input" in capsys.readouterr().err
