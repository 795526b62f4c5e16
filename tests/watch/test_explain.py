"""The explainer (harness/watch/explain.py, corpus.py, patterns.py): an exception or a warning named by the case that
records it. Proven by the corpus itself: every case whose recorded broken run on 2.13.0 says
something its fixed run does not is run here, in this process, and what its broken variant says
must name it, while what its fixed variant and its near miss say must not."""

from __future__ import annotations

import builtins
import importlib.util
import inspect
import warnings
from pathlib import Path

import pytest
import torch
from planting import ROOT, runs_other_interpreters, variant_run

from torch_pitfalls.loader import load_cases
from torch_pitfalls.matrix import load_matrix
from torch_pitfalls.matrix.changes import remask
from torch_pitfalls.watch import corpus as recorded_corpus
from torch_pitfalls.watch import explain, watch
from torch_pitfalls.watch.explain import Explainer, explained_cases
from torch_pitfalls.watch.patterns import pattern_of

RELEASE = "2.13.0"  # the release this project's environment runs, and the matrix's reference
CASES_DIR, REPORTS = ROOT / "cases", ROOT / "reports"
CASES = {lc.id: lc for lc in load_cases(CASES_DIR)}
MATRIX = load_matrix(REPORTS, CASES_DIR)

# What the explainer refuses to name on 2.13.0, reviewed one by one (its reasons are printed by
# test_what_the_proofs_skip): Python's own wording with nothing of torch's left in it, and a
# heading whose telling lines the record does not keep.
REFUSED = {
    "cuda-async-keyword": "invalid syntax (train.py, line 1): any syntax error says so",
    "sampler-data-source": "object.__init__() takes exactly one argument: any class passing arguments up says so",
    "dataparallel-state-dict-prefix": "Error(s) in loading state_dict for Linear: its near miss says so too",
    # their symptoms ask for the values their own programs chose (the image's height read as its
    # channels; the label one past the last class): a grayscale batch or a -1 label says the same words
    "channels-last-image-into-conv": "expected input[...] to have 3 channels, but got N channels: its near miss too",
    "labels-start-at-one": "Target N is out of bounds: its near miss (a -1 label) too",
    "torch-typing-names-removed": "cannot import name 'Any' from 'torch': Python's wording, the name the user's",
}


def _messages(fp: dict | None) -> set[tuple[str, str, str]]:
    if fp is None:
        return set()
    out = {("warning", w["category"], w["message"]) for w in fp["warnings"]}
    if fp["error"]:
        out.add(("error", fp["error"]["type"], fp["error"]["message"]))
    return out


def symptom_messages(release: str) -> dict[str, set]:
    """Case -> what its broken run said on ``release`` and its fixed run did not, read from the
    reports here, independently of the explainer's own reading."""
    out = {}
    for c in MATRIX.cases:
        record = MATRIX.cell(c.id, release).record
        if record is None or not record.fingerprints:
            continue
        broken, fixed = (remask(record.fingerprints.get(v)) for v in ("broken", "fixed"))
        said = _messages(broken) - _messages(fixed)
        if said:
            out[c.id] = said
    return out


SYMPTOMS = symptom_messages(RELEASE)


@pytest.fixture(scope="module")
def explainer() -> Explainer:
    return Explainer.for_release(RELEASE, REPORTS, CASES_DIR)


def why_not_here(case_id: str, explainer: Explainer) -> str | None:
    """Why a case's variants cannot be proven in this process, or None."""
    lc = CASES[case_id]
    missing = [m for m in lc.case.requires if importlib.util.find_spec(m.split(".")[0]) is None]
    if missing:
        return f"{case_id}: needs {', '.join(missing)}, not installed"
    if "cpu" in lc.case.isolate:
        return f"{case_id}: runs in a process of its own on cpu"
    if runs_other_interpreters(lc.path):
        return f"{case_id}: its variants run in another interpreter"
    if case_id in explainer.refused:
        return f"{case_id}: refused by the explainer: {'; '.join(explainer.refused[case_id])}"
    return None


def named_by(explainer: Explainer, lc, variant: str) -> tuple[set[str], int]:
    """The cases that what ``variant`` said names, and how many things it said."""
    obs = variant_run(lc, variant)
    names = set()
    for w in obs.warnings:
        names |= {x.case for x in explainer.for_warning(w.category, str(w.message))}
    if obs.error is not None:
        names |= {x.case for x in explainer.for_exception(obs.error)}
    return names, len(obs.warnings) + (obs.error is not None)


# -- the proof, case by case ------------------------------------------------------------------------


def test_the_proofs_cover_the_cases_that_say_something():
    assert len(SYMPTOMS) >= 50, sorted(SYMPTOMS)
    assert {"dataparallel-attribute", "tensor-copy-construct", "backward-twice"} <= set(SYMPTOMS)


def test_what_the_proofs_skip(explainer, capsys):
    """Every skip below has a precise reason; this prints them, counted, and pins the refusals."""
    reasons = {c: why_not_here(c, explainer) for c in sorted(SYMPTOMS)}
    skipped = {c: r for c, r in reasons.items() if r}
    with capsys.disabled():
        print(f"\nexplainer proofs on {RELEASE}: {len(reasons) - len(skipped)} run, {len(skipped)} skipped")
        for reason in skipped.values():
            print(f"  skipped: {reason}")
    assert set(explainer.refused) & set(SYMPTOMS) == set(REFUSED)
    elsewhere = {c for c in SYMPTOMS if runs_other_interpreters(CASES[c].path)}  # the launcher's --local-rank
    assert set(skipped) == set(REFUSED) | elsewhere, skipped  # on this machine, nothing else is skipped


@pytest.mark.parametrize("case_id", sorted(SYMPTOMS))
def test_the_case_proves_its_explanation(case_id, explainer):
    reason = why_not_here(case_id, explainer)
    if reason:
        pytest.skip(reason)
    lc = CASES[case_id]
    names, said = named_by(explainer, lc, "broken")
    assert said, f"{case_id}: the broken variant said nothing here (recorded: {SYMPTOMS[case_id]})"
    assert case_id in names, f"{case_id}: what the broken variant said names {sorted(names)}"
    for variant in ("fixed", "near_miss"):
        if hasattr(lc.module, variant):
            names, _ = named_by(explainer, lc, variant)
            assert case_id not in names, f"{case_id}: what its {variant} variant said names it"


def test_explained_cases_are_those_with_a_symptom_message(explainer):
    cases = explained_cases(RELEASE)
    assert cases == explainer.explained_cases()
    assert set(SYMPTOMS) - set(REFUSED) <= cases
    # the others: no usable record on 2.13.0 (torchvision was missing), explained as other releases said
    for case_id in cases - set(SYMPTOMS):
        record = MATRIX.cell(case_id, RELEASE).record
        assert record is None or not record.fingerprints, case_id
    assert not cases & set(REFUSED)
    if torch.__version__.split("+")[0] == RELEASE:
        assert explained_cases() == cases


# -- matching ---------------------------------------------------------------------------------------


def _produce(fn) -> BaseException:
    try:
        fn()
    except BaseException as exc:  # noqa: BLE001
        return exc
    raise AssertionError("it did not raise")


class Net(torch.nn.Module):
    pass


def _passes_arguments_up():
    class Box:
        def __init__(self, size):
            super().__init__(size)

    Box(3)


def _user_function(x):
    return x


UNRELATED_ERRORS = {
    "matmul shapes": lambda: torch.ones(2, 3) @ torch.ones(4, 5),
    "linear input size": lambda: torch.nn.Linear(3, 4)(torch.ones(2, 5)),
    "cat sizes": lambda: torch.cat([torch.ones(2, 3), torch.ones(3, 4)], dim=1),
    "index": lambda: torch.ones(3)[5],
    "plain ValueError": lambda: (_ for _ in ()).throw(ValueError("bad")),
    "user attribute": lambda: Net().encoder,
    "user keyword": lambda: _user_function(1, verbos=True),
    "syntax": lambda: compile("x y", "train.py", "exec"),
    # recorded by sampler-data-source (2.10 on), yet Python's own wording: refused
    "arguments up": _passes_arguments_up,
    "missing key": lambda: {}["weight"],
    "none plus int": lambda: None + 1,
}
UNRELATED_WARNINGS = [
    (UserWarning, "something happened"),
    (DeprecationWarning, "`foo.bar` is deprecated. Please use `foo.baz` instead."),  # torch's phrasing, other API
    (
        FutureWarning,
        "`torch.testing.assert_allclose()` is deprecated since 1.12 and will be removed in a future "
        "release. Please use `torch.testing.assert_close()` instead.",
    ),  # no case records it
    (UserWarning, "Using a target size that is different to the input size"),  # the words, not the message
    (RuntimeWarning, "invalid value encountered in divide"),
]


@pytest.mark.parametrize("release", [RELEASE, "9.9.0"])  # 9.9.0: no record, so every release counts
def test_unrelated_errors_and_warnings_are_explained_by_nothing(release):
    e = Explainer.for_release(release, REPORTS, CASES_DIR)
    for name, fn in UNRELATED_ERRORS.items():
        exc = _produce(fn)
        assert e.for_exception(exc) == [], f"{name}: {type(exc).__name__}: {exc}"
    for category, message in UNRELATED_WARNINGS:
        assert e.for_warning(category, message) == [], message
    assert e.problem is None


def test_what_the_user_program_chooses_matches_anything(explainer):
    # sizes, and a C++ warning's source line; as recorded: torch.Size([4]) against torch.Size([4, 1])
    said = (
        "Using a target size (torch.Size([128, 7])) that is different to the input size "
        "(torch.Size([128, 1, 7])). This will likely lead to incorrect results due to broadcasting. "
        "Please ensure they have the same size."
    )
    assert [x.case for x in explainer.for_warning(UserWarning, said)] == ["target-shape-broadcast"]
    # a method of the user's model (the record says 'freeze_backbone'), and the user's Function
    assert [
        x.case for x in explainer.for_exception(AttributeError("'DataParallel' object has no attribute 'encoder'"))
    ] == ["dataparallel-attribute"]
    said = "function MyLayerBackward returned an incorrect number of gradients (expected 4, got 1)"
    assert [x.case for x in explainer.for_exception(RuntimeError(said))] == ["custom-function-grad-count"]
    # ... but not what torch names: another wrapper class, another missing attribute of a tensor
    assert explainer.for_exception(AttributeError("'Net' object has no attribute 'encoder'")) == []
    assert explainer.for_exception(AttributeError("'Tensor' object has no attribute 'nmes'")) == []
    # the recorded GradScaler (and, from the second round, autocast) wording, about an API no case has
    assert (
        explainer.for_warning(
            FutureWarning,
            "`torch.cuda.amp.custom_op(args...)` is deprecated. "
            "Please use `torch.amp.custom_op('cuda', args...)` instead.",
        )
        == []
    )


def test_the_exception_type_and_warning_category_must_match(explainer):
    text = "grad can be implicitly created only for scalar outputs"

    class MyError(RuntimeError):
        pass

    assert [x.case for x in explainer.for_exception(MyError(text))] == ["backward-non-scalar"]  # a subclass
    assert explainer.for_exception(ValueError(text)) == []
    said = "`cummulative_sizes` attribute is renamed to `cumulative_sizes`"
    assert [x.case for x in explainer.for_warning(FutureWarning, said)] == ["concat-dataset-cummulative-sizes"]
    assert explainer.for_warning(UserWarning, said) == []
    # what an error was raised from is read too
    try:
        try:
            raise RuntimeError(text)
        except RuntimeError as inner:
            raise ValueError("training failed") from inner
    except ValueError as outer:
        assert [x.case for x in explainer.for_exception(outer)] == ["backward-non-scalar"]


def test_a_message_two_cases_record_names_both(explainer):
    said = "result type Float can't be cast to the desired output type Long"
    found = explainer.for_exception(RuntimeError(said))
    assert sorted(x.case for x in found) == ["inplace-op-cannot-promote", "state-dict-averaging-long-buffers"]
    for x in found:
        other = ({x.case for x in found} - {x.case}).pop()
        assert "recorded by 2 cases" in x.message and other in x.message


def test_an_explanation_says_what_goes_wrong_the_fix_and_the_release(explainer):
    [x] = explainer.for_exception(AttributeError("'DataParallel' object has no attribute 'encoder'"))
    assert x.case == "dataparallel-attribute" and x.pedantic is False
    assert x.message.startswith("'DataParallel' object has no attribute ...; the fix: go through `.module`")
    assert "\n" not in x.message
    assert (
        x.detail
        == "recorded on torch 2.13.0 as: AttributeError: 'DataParallel' object has no attribute 'freeze_backbone'"
    )


def test_a_warning_the_case_does_not_ask_for_names_nothing(explainer):
    """jit-trace-grad-constant's broken run also gets torch.jit.trace's own deprecation notice (its
    fixed run silences it): its symptom asks only for the error, so the notice is incidental."""
    said = "`torch.jit.trace` is deprecated. Please switch to `torch.compile` or `torch.export`."
    assert ("warning", "DeprecationWarning", said) in SYMPTOMS["jit-trace-grad-constant"]
    assert explainer.for_warning(DeprecationWarning, said) == []
    assert f"DeprecationWarning: {said}" in explainer.incidental["jit-trace-grad-constant"]


def test_a_record_that_found_the_symptom_absent_names_nothing():
    """On 2.4.1 torch.load's weights_only notice is recorded by four cases' broken runs, but
    torch-load-pickle-args-ignored found its own symptom absent there."""
    said = {
        c: _recorded(c, "2.4.1", "warning")
        for c in (
            "torch-load-weights-only-warning",
            "torch-load-weights-only-default",
            "torch-load-pickle-args-ignored",
        )
    }
    assert len(set(said.values())) == 1
    category, recorded = said["torch-load-pickle-args-ignored"]
    assert recorded.endswith("…")  # cut short in the record: the user's whole message starts with it
    full = recorded[:-1] + "usted-models for more details). In a future release, the default value will flip."
    found = Explainer.for_release("2.4.1", REPORTS, CASES_DIR).for_warning(getattr(builtins, category), full)
    assert sorted(x.case for x in found) == [
        "torch-load-weights-only-default",
        "torch-load-weights-only-warning",
        "weights-only-numpy-in-checkpoint",
    ]


def _fp(error=None, warns=()):
    return {
        "error": error and {"type": error[0], "message": error[1]},
        "warnings": [{"category": c, "message": m} for c, m in warns],
        "value": None,
    }


def test_what_counts_as_a_symptom_message(monkeypatch):
    """On planted records: a message the fixed run also gave, a record that found the symptom
    absent, and a record without the fixed run's fingerprint (then other releases speak) name nothing."""
    import torch_pitfalls.matrix
    from torch_pitfalls.matrix import CaseSource, Matrix
    from torch_pitfalls.run.report import Record

    copy = ("UserWarning", "To copy construct from a tensor, it is recommended to use something else.")
    scalar = ("RuntimeError", "grad can be implicitly created only for scalar outputs")
    step = ("ValueError", "step must be greater than zero")
    nxt = ("AttributeError", "'_SingleProcessDataLoaderIter' object has no attribute 'next'")
    planted = {  # (case, release): (observed, broken fingerprint, fixed fingerprint)
        ("tensor-copy-construct", RELEASE): (True, _fp(warns=[copy]), _fp(warns=[copy])),
        ("backward-non-scalar", RELEASE): (False, _fp(error=scalar), _fp()),
        ("negative-step-slicing", RELEASE): (True, _fp(error=step), None),
        ("negative-step-slicing", "2.12.1"): (True, _fp(error=step), _fp()),
        ("dataloader-iterator-next", RELEASE): (True, _fp(error=nxt), _fp()),
    }
    sources = [CaseSource(c, CASES[c].topic, CASES[c].source_sha256) for c in {c for c, _ in planted}]
    records = {
        (c, v, "cpu"): Record(
            case=c,
            topic=CASES[c].topic,
            kind=CASES[c].case.kind,
            device="cpu",
            outcome="reproduced" if seen else "absent",
            expected=seen,
            observed=seen,
            source_sha256=CASES[c].source_sha256,
            fingerprints={"broken": b, "fixed": f},
        )
        for (c, v), (seen, b, f) in planted.items()
    }
    matrix = Matrix(sources, ["2.12.1", RELEASE], ["cpu"], {}, _records=records)
    monkeypatch.setattr(torch_pitfalls.matrix, "load_matrix", lambda *a, **k: matrix)
    monkeypatch.setattr(recorded_corpus, "_CORPORA", {})
    e = Explainer.for_release(RELEASE, REPORTS, CASES_DIR)
    assert e.for_warning(UserWarning, copy[1]) == []  # the fixed run said it too
    assert e.for_exception(RuntimeError(scalar[1])) == []  # the symptom was absent there
    [x] = e.for_exception(ValueError(step[1]))  # 2.13.0 cannot say: 2.12.1 does
    assert (x.case, x.release) == ("negative-step-slicing", "2.12.1")
    [x] = e.for_exception(AttributeError(nxt[1]))
    assert (x.case, x.release) == ("dataloader-iterator-next", RELEASE)
    assert e.explained_cases() == {"negative-step-slicing", "dataloader-iterator-next"}


# -- versions -------------------------------------------------------------------------------------


def _recorded(case_id: str, release: str, kind: str) -> tuple[str, str]:
    [(category, message)] = [(c, m) for k, c, m in symptom_messages(release)[case_id] if k == kind]
    return category, message


def test_an_older_release_words_it_otherwise():
    category, old = _recorded("deprecated-init-without-underscore", "2.3.1", "warning")
    new_category, new = _recorded("deprecated-init-without-underscore", RELEASE, "warning")
    assert (category, old) != (new_category, new)
    warning = getattr(builtins, category)
    [x] = Explainer.for_release("2.3.1", REPORTS, CASES_DIR).for_warning(warning, old)
    assert x.case == "deprecated-init-without-underscore"
    assert x.detail == f"recorded on torch 2.3.1 as: {category}: {old}"
    # 2.13.0 words it otherwise: its own wording only
    assert Explainer.for_release(RELEASE, REPORTS, CASES_DIR).for_warning(warning, old) == []
    # a release the matrix did not record: every release, nearest first
    [x] = Explainer.for_release("2.3.0", REPORTS, CASES_DIR).for_warning(warning, old)
    assert x.release == "2.3.1"


def test_an_older_error_wording_is_named_as_that_release_recorded_it():
    _, old = _recorded("cross-entropy-target-dtype", "2.11.0", "error")
    _, new = _recorded("cross-entropy-target-dtype", RELEASE, "error")
    assert old != new
    [x] = Explainer.for_release("2.11.0", REPORTS, CASES_DIR).for_exception(RuntimeError(old))
    assert (x.case, x.release) == ("cross-entropy-target-dtype", "2.11.0")
    assert x.detail == f"recorded on torch 2.11.0 as: RuntimeError: {old}"
    assert Explainer.for_release(RELEASE, REPORTS, CASES_DIR).for_exception(RuntimeError(old)) == []
    [x] = Explainer.for_release("2.16.0.dev20270101", REPORTS, CASES_DIR).for_exception(RuntimeError(new))
    assert x.release == "2.15.0"  # the nearest release that recorded it


# -- through the watcher --------------------------------------------------------------------------


def _line_of(lc, function: str, text: str) -> int:
    lines, start = inspect.getsourcelines(getattr(lc.module, function))
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_the_watcher_explains_a_warning_at_the_case_line():
    lc = CASES["tensor-copy-construct"]
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with watch() as w:
            lc.module.broken("cpu")
    found = [f for f in w.findings if f.kind == "explained"]
    assert [(f.case, Path(f.path).resolve(), f.line) for f in found] == [
        ("tensor-copy-construct", lc.path.resolve(), _line_of(lc, "broken", "torch.tensor(scaled)"))
    ]
    assert found[0].detail.startswith("recorded on torch ") and w.errors == []


def test_the_watcher_explains_an_exception_at_the_case_line():
    lc = CASES["dataparallel-attribute"]
    with pytest.raises(AttributeError):
        with watch() as w:
            lc.module.broken("cpu")
    found = [f for f in w.findings if f.kind == "explained"]
    assert [(f.case, Path(f.path).resolve(), f.line) for f in found] == [
        ("dataparallel-attribute", lc.path.resolve(), _line_of(lc, "broken", "model.freeze_backbone()"))
    ]


# -- cost and failure -----------------------------------------------------------------------------


def _read_once_already(explainer):
    """What load_corpus read for ``explainer`` (read once more here, not in the test's own time)."""
    return recorded_corpus.shared_corpus(*explainer._resolved_dirs())


def test_nothing_is_read_before_the_first_message(monkeypatch, explainer):
    calls = []
    corpus = _read_once_already(explainer)
    monkeypatch.setattr(recorded_corpus, "_CORPORA", {})
    monkeypatch.setattr(explain, "_SHARED", {})
    monkeypatch.setattr(recorded_corpus, "load_corpus", lambda *a: calls.append(a) or corpus)
    with watch() as w:
        torch.ones(2).sum()
    assert calls == [] and w._explainer is None
    first, second = (Explainer.for_release(r, REPORTS, CASES_DIR) for r in (RELEASE, "2.4.1"))
    assert calls == []
    first.for_warning(UserWarning, "a")
    second.for_exception(ValueError("b"))
    assert len(calls) == 1  # once per process, whatever the release


def test_a_message_that_matches_nothing_is_read_once(monkeypatch, explainer):
    reads = []
    real = explain._normalised
    monkeypatch.setattr(explain, "_normalised", lambda text: reads.append(text) or real(text))
    for _ in range(1000):
        assert explainer.for_warning(UserWarning, "step 3 of nothing in particular") == []
    assert len(reads) == 1


def test_a_warning_while_the_explainer_reads_does_not_recurse(monkeypatch, explainer):
    corpus = _read_once_already(explainer)
    monkeypatch.setattr(recorded_corpus, "_CORPORA", {})
    monkeypatch.setattr(explain, "_SHARED", {})

    def noisy(*args):
        warnings.warn("a warning while the matrix is read", UserWarning)
        return corpus

    calls = []
    monkeypatch.setattr(recorded_corpus, "load_corpus", lambda *a: calls.append(a) or noisy(*a))
    said = (
        "To copy construct from a tensor, it is recommended to use sourceTensor.detach().clone() or "
        "sourceTensor.detach().clone().requires_grad_(True), rather than torch.tensor(sourceTensor)."
    )
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        with watch() as w:
            warnings.warn(said, UserWarning)
    assert w.errors == [] and len(calls) == 1
    assert [f.case for f in w.findings if f.kind == "explained"] == ["tensor-copy-construct"]


def test_without_reports_it_explains_nothing_and_never_raises(tmp_path):
    e = Explainer.for_release(RELEASE, tmp_path / "no-reports", CASES_DIR)
    assert e.for_warning(UserWarning, "anything") == []
    assert e.for_exception(RuntimeError("grad can be implicitly created only for scalar outputs")) == []
    assert e.explained_cases() == set()
    assert "no such reports folder" in e.problem
    bad = tmp_path / "reports"
    bad.mkdir()
    (bad / f"torch-{RELEASE}-cpu.json").write_text("{", encoding="utf-8")
    e = Explainer.for_release(RELEASE, bad, CASES_DIR)
    assert e.for_exception(RuntimeError("grad can be implicitly created only for scalar outputs")) == []
    assert "torch-2.13.0-cpu.json" in e.problem


def test_odd_input_is_explained_by_nothing(explainer):
    class Unprintable(Exception):
        def __str__(self):
            raise RuntimeError("no")

    assert explainer.for_exception(Unprintable()) == []
    assert explainer.for_warning(None, None) == []
    assert explainer.for_warning(UserWarning, "") == []
    assert explainer.problem is None  # still on
    assert explainer.for_exception(RuntimeError("grad can be implicitly created only for scalar outputs"))


# -- patterns ---------------------------------------------------------------------------------------


def test_a_pattern_of_mostly_wildcards_is_refused():
    assert pattern_of("error", "RuntimeError", "Expected 3 but got 4").regex is None
    assert pattern_of("error", "RuntimeError", "[2, 3] vs [2, 4] at dim 1 of 3").regex is None
    kept = pattern_of("error", "RuntimeError", "stack expects each tensor to be equal size, but got [3, 4] at entry 0")
    assert kept.regex.match("stack expects each tensor to be equal size, but got [1] at entry 12")
    assert not kept.regex.match("stack expects each tensor to be equal size")


def test_a_truncated_record_matches_as_a_prefix():
    recorded = "Trying to backward through the graph a second time (or directly access saved tensors after they …"
    p = pattern_of("error", "RuntimeError", recorded)
    assert p.regex.match(
        "Trying to backward through the graph a second time (or directly access saved tensors "
        "after they have already been freed). Saved intermediate values ..."
    )
    full = pattern_of("error", "RuntimeError", "step must be greater than zero")
    assert not full.regex.match("step must be greater than zero, and more")


def test_one_recorded_first_line_two_cases_told_apart_by_the_rest_of_the_message(explainer):
    """torch.load's weights-only refusal keeps the same first line for an argparse.Namespace and for
    NumPy values; each case's own run.raised patterns, asked of the user's whole message, decide."""
    if torch.__version__.split("+")[0] != RELEASE:
        pytest.skip(f"the refusal is the default from 2.6; this checks the installed {RELEASE}")
    for case_id, other in (
        ("weights-only-numpy-in-checkpoint", "torch-load-weights-only-default"),
        ("torch-load-weights-only-default", "weights-only-numpy-in-checkpoint"),
    ):
        names, said = named_by(explainer, CASES[case_id], "broken")
        assert said and case_id in names and other not in names, (case_id, names)
