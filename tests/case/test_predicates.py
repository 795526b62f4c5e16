"""Every symptom predicate is as narrow as its pitfall.

Two kinds of look-alike are fed to each case's ``symptom`` and must be refused:
- the case's own ``near_miss(device)``: a failure of the same type that is another bug
  (another wrong value, another message of the same exception, a warning of the same category
  about something else);
- for a symptom that is an exception or a warning, the broken run itself with every message
  replaced by an unrelated one of the same type: a predicate that matches on the type alone
  accepts it.
"""

from __future__ import annotations

import warnings

import pytest
from planting import ROOT, runs_other_interpreters, variant_run

from torch_pitfalls.loader import load_corpus
from torch_pitfalls.observation import Observation

CASES, _ = load_corpus(ROOT / "cases")
FOREIGN = "an unrelated failure that has nothing to do with this pitfall"


def _broken_run(lc):
    return variant_run(lc, "broken")


def test_every_case_has_a_near_miss():
    """A missing look-alike is named, case by case."""
    lacking = sorted(lc.id for lc in CASES if not callable(getattr(lc.module, "near_miss", None)))
    assert not lacking, f"cases without near_miss(device): {', '.join(lacking)}"


WITH_NEAR_MISS = [lc for lc in CASES if callable(getattr(lc.module, "near_miss", None))]


@pytest.mark.parametrize(
    "lc", [lc for lc in WITH_NEAR_MISS if not runs_other_interpreters(lc.path)], ids=lambda lc: lc.id
)
def test_the_symptom_refuses_the_near_miss(lc):
    run = variant_run(lc, "near_miss")
    assert run.error is not None or run.warnings or run.value is not None, "near_miss produced nothing to judge"
    assert not lc.module.symptom(run), f"{lc.id}: symptom accepts its near miss ({run.summary()})"


@pytest.mark.parametrize("lc", [lc for lc in WITH_NEAR_MISS if runs_other_interpreters(lc.path)], ids=lambda lc: lc.id)
def test_the_symptom_refuses_the_near_miss_run_elsewhere(lc, near_miss_verdicts):
    """The same, for a near miss that starts other interpreters: judged in a background run
    (tests/near_miss_run.py) while the foreground goes on."""
    assert lc.id in near_miss_verdicts, f"{lc.id}: the background run did not judge its near miss"
    verdict = near_miss_verdicts[lc.id]
    assert verdict["produced"], "near_miss produced nothing to judge"
    assert not verdict["accepted"], f"{lc.id}: symptom accepts its near miss ({verdict['summary']})"


def _named(name: str, base: type):
    """The one class below ``base`` called ``name`` among those loaded (None if not exactly one)."""
    found, todo = set(), [base]
    while todo:
        cls = todo.pop()
        if cls.__name__ == name:
            found.add(cls)
        todo.extend(cls.__subclasses__())
    return found.pop() if len(found) == 1 else None


def _foreign_exception(cls: type[BaseException]) -> BaseException:
    """An exception of type ``cls`` carrying an unrelated message (built without calling its
    __init__, which for some types wants more than a message)."""
    other = cls.__new__(cls)
    other.args = (FOREIGN,)
    return other


@pytest.mark.parametrize("lc", CASES, ids=lambda lc: lc.id)
def test_the_symptom_refuses_the_same_type_with_another_message(lc, clean_records):
    recorded = (clean_records.get((lc.id, "cpu")) or {}).get("fingerprints") or {}
    broken = recorded.get("broken")
    if broken is not None and broken["error"] is None and not broken["warnings"]:
        # the clean run's fingerprint says so; no need to run it again to find out
        pytest.skip("the broken run neither raises nor warns: its near_miss covers the value")
    if broken is not None and broken["error"] is not None and _named(broken["error"]["type"], BaseException):
        # it raised: the look-alike needs only the exception's type, which the fingerprint names
        # (no second run of a case that may start interpreters); the symptom must have accepted
        # the recorded message in that run, and must refuse another
        if clean_records[lc.id, "cpu"]["observed"] is not True:
            pytest.skip("the symptom does not show on this torch and device")
        foreign = Observation(value=None, error=_foreign_exception(_named(broken["error"]["type"], BaseException)))
        assert not lc.module.symptom(foreign), f"{lc.id}: symptom accepts {foreign.summary()}"
        return
    run = _broken_run(lc)
    if run.error is None and not run.warnings:
        pytest.skip("the broken run neither raises nor warns: its near_miss covers the value")
    if not lc.module.symptom(run):
        pytest.skip("the symptom does not show on this torch and device")
    if run.error is not None:
        foreign = Observation(value=None, error=_foreign_exception(type(run.error)), output=run.output)
    else:
        foreign = Observation(value=run.value, error=None, output=run.output)
    foreign.warnings = [
        warnings.WarningMessage(w.category(FOREIGN), w.category, w.filename, w.lineno) for w in run.warnings
    ]
    if run.error is None and lc.module.symptom(Observation(value=run.value)):
        pytest.skip("the symptom is the value itself; the warning is incidental (near_miss covers the value)")
    assert not lc.module.symptom(foreign), f"{lc.id}: symptom accepts {foreign.summary()}"
