"""Every detector is proven by its case: under the watcher, the case's broken code is reported
with the case's id at a line of the case file, and its fixed code and near miss are not. And no
sound detector fires on any other variant of the corpus, but where the report is itself true."""

from __future__ import annotations

import pytest
from planting import ROOT, runs_other_interpreters

from torch_pitfalls.loader import load_cases
from torch_pitfalls.watch.detectors import all_detectors
from torch_pitfalls.watch.proofs import prove, watched

CASES = {lc.id: lc for lc in load_cases(ROOT / "cases")}
DETECTORS = all_detectors()
VARIANTS = ("broken", "fixed", "near_miss")
# Their variants run in other interpreters: a watcher in this process sees none of it, so
# sweeping them proves nothing and costs half a minute.
OTHER_PROCESSES = {case_id for case_id, lc in CASES.items() if runs_other_interpreters(lc.path)}
# Reports on another case's variant that are true: that code has the pitfall too.
TRUE_ELSEWHERE = {
    # its training steps keep `running_loss = running_loss + loss` (the near miss's comment says
    # "should be loss.item()"): a backpropagated loss kept with its graph
    ("eval-without-no-grad", "near_miss"): {"loss-append-keeps-graph"},
    # each near miss is the other's broken code: a misspelled freeze (`p.require_grad = False`)
    # beside a real freeze that SGD's momentum outlives
    ("requires-grad-typo", "near_miss"): {"frozen-params-keep-moving"},
    ("frozen-params-keep-moving", "near_miss"): {"requires-grad-typo"},
    # its near miss loads every key, then calls model.reset_parameters() ("initialise the model"
    # after loading it): the init-after-load ordering bug its prose names
    ("load-state-dict-strict-false", "near_miss"): {"init-after-load-state-dict"},
    # a distance of identical points: sqrt's infinite derivative at 0 times the zero gradient of
    # its argument is NaN, the mechanism of the masked division (0 * inf in the backward)
    ("sqrt-at-zero-nan-grad", "broken"): {"nan-grad-through-mask"},
    # losses that grow a thousandfold and then overflow: the explosion exploding-gradients names, here
    # from raw 0-255 pixels (and, in both near misses, a learning rate of 10)
    ("input-never-normalized", "broken"): {"exploding-gradients-without-clipping"},
    ("input-never-normalized", "near_miss"): {"exploding-gradients-without-clipping"},
    ("learning-rate-off-by-orders", "near_miss"): {"exploding-gradients-without-clipping"},
}


def test_every_detector_belongs_to_one_case():
    cases = [d.case for d in DETECTORS]
    assert len(cases) == len(set(cases)) and len(cases) >= 10
    assert set(cases) <= set(CASES), set(cases) - set(CASES)


@pytest.mark.parametrize("detector", DETECTORS, ids=lambda d: d.case)
def test_the_case_proves_its_detector(detector):
    proof = prove(detector, CASES[detector.case])
    assert proof["errors"] == []
    assert proof["broken_reported"], f"{detector.case}: the broken code was not reported at a line of the case"
    assert all(proof["silent_on"].values()), f"{detector.case}: reported on {proof['silent_on']}"
    assert proof["proven"]


def test_no_detector_fires_on_other_code_of_the_corpus():
    """Every sound detector at once, on all three variants of every case run in this process."""
    fired = {}
    for case_id, lc in CASES.items():
        if case_id in OTHER_PROCESSES:
            continue
        for variant in VARIANTS:
            fn = getattr(lc.module, variant, None)
            if fn is None:
                continue
            w = watched(fn)
            assert w.errors == [], (case_id, variant, w.errors)
            got = {f.case for f in w.findings} - ({case_id} if variant == "broken" else set())
            if got:
                fired[(case_id, variant)] = got
    assert fired == TRUE_ELSEWHERE
    assert len(CASES) - len(OTHER_PROCESSES) > 90  # the sweep ran over the corpus, not an empty folder
