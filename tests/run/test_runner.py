"""Outcomes decided by the runner, each proven with a planted case that should earn it."""

from __future__ import annotations

import pytest
import torch
from planting import case_source

from torch_pitfalls.loader import load_case
from torch_pitfalls.run.runner import run_case

NOW = torch.__version__


def run(corpus, case_id="planted-case", device="cpu", **fields):
    return run_case(load_case(corpus.plant(case_id, **fields)), device)


def test_symptom_expected_and_seen_is_reproduced(corpus):
    record = run(corpus)
    assert (record.outcome, record.expected, record.observed) == ("reproduced", True, True)
    assert "nan" in record.broken and "1." in record.fixed


def test_symptom_expected_but_absent_is_a_mismatch(corpus):
    record = run(corpus, broken="return torch.tensor(0.0, device=device)")
    assert record.outcome == "mismatch"
    assert "expected but not seen" in record.detail


def test_symptom_seen_outside_affects_is_a_mismatch(corpus):
    record = run(corpus, affects="'<1.0'")
    assert record.outcome == "mismatch"
    assert "seen but not expected" in record.detail and "<1.0" in record.detail


def test_symptom_seen_on_a_device_not_listed_is_a_mismatch(corpus):
    record = run(corpus, devices=("cuda",))
    assert (record.outcome, record.expected) == ("mismatch", False)


def test_not_expected_and_not_seen_is_absent(corpus):
    record = run(corpus, affects="'<1.0'", broken="return torch.tensor(0.0, device=device)")
    assert record.outcome == "absent"


def test_a_wrong_fix_fails(corpus):
    record = run(corpus, fixed="assert torch.tensor(2.0).item() == 1.0, 'fixed value is wrong'")
    assert record.outcome == "fix-failed"
    assert "AssertionError" in record.fixed and "fixed value is wrong" in record.fixed


def test_a_fix_that_warns_fails(corpus):
    record = run(corpus, fixed="import warnings\nwarnings.warn('still deprecated', DeprecationWarning)\nreturn 1")
    assert record.outcome == "fix-failed"
    assert "DeprecationWarning" in record.fixed


def test_an_exception_is_an_observation(corpus):
    record = run(
        corpus,
        kind="error",
        broken="raise RuntimeError('Trying to backward through the graph a second time')",
        symptom="return run.raised(RuntimeError, 'second time')",
    )
    assert record.outcome == "reproduced"
    assert record.broken.startswith("raised RuntimeError: Trying to backward")


def test_a_predicate_that_raises_is_an_error(corpus):
    record = run(corpus, symptom="return run.value.no_such_attribute")
    assert record.outcome == "error" and "symptom predicate raised AttributeError" in record.detail


@pytest.mark.parametrize(
    "body, leaked",
    [
        ("torch.set_default_dtype(torch.float64)", "default dtype"),
        ("torch.manual_seed(123)", "torch RNG state"),
        ("import random; random.seed(5)", "Python random state"),
        ("torch.set_printoptions(precision=10)", "print options"),
        ("torch.set_grad_enabled(False)", "grad mode"),
        ("torch.autograd.set_detect_anomaly(True)", "anomaly mode"),
        ("torch.use_deterministic_algorithms(True)", "deterministic algorithms"),
        ("import warnings; warnings.simplefilter('ignore')", "warning filters"),
        ("import os; os.environ['PITFALLS_PLANTED'] = '1'", "environment variables"),
    ],
)
def test_a_leaked_global_fails_by_name_and_is_restored(corpus, body, leaked):
    import random
    import warnings

    from torch_pitfalls.helpers import reseed

    reseed()  # the harness reseeds before each variant: "before" is that state, whatever ran first
    before = (torch.get_default_dtype(), torch.get_rng_state(), random.getstate(), list(warnings.filters))
    record = run(corpus, broken=f"{body}\nreturn torch.tensor(float('nan'))")
    assert record.outcome == "error"
    assert f"broken variant leaked global state: {leaked}" in record.detail
    after = (torch.get_default_dtype(), torch.get_rng_state(), random.getstate(), list(warnings.filters))
    assert before[0] == after[0] and torch.equal(before[1], after[1]) and before[2:] == after[2:]
    assert torch.is_grad_enabled() and not torch.is_anomaly_enabled()
    assert not torch.are_deterministic_algorithms_enabled()


def test_drawing_inside_seeded_is_not_a_leak(corpus):
    record = run(
        corpus,
        broken="from torch_pitfalls import seeded\nwith seeded(0):\n    x = torch.randn(3)\nreturn (x / 0 * 0).sum()",
    )
    assert record.outcome == "reproduced", record.detail


def test_every_variant_starts_from_the_same_seed(corpus):
    body = "from torch_pitfalls import seeded\nwith seeded(0):\n    pass\nreturn torch.get_rng_state().sum()"
    first = run(corpus, "seed-one", broken=body, symptom="return False", affects="'<1.0'")
    second = run(corpus, "seed-two", broken=body, symptom="return False", affects="'<1.0'")
    assert first.broken == second.broken


def test_an_in_process_hang_is_bounded(corpus):
    record = run(corpus, timeout=0.5, broken="while True:\n    pass")
    assert (
        record.outcome == "error"
        and "ran past its 0.5 s time limit (stretched with the machine's load)" in record.detail
    )


def test_a_crowded_machine_gives_a_slow_pass_not_a_timeout(corpus, monkeypatch):
    """A limit stretches with the machine's load: a variant that needs 1.5 s under a 0.5 s limit
    passes where the machine is eight times crowded (4 s: the margin is wide enough for this very
    run to be slowed by real load), and is stopped where it is quiet."""
    import torch_pitfalls.helpers

    slow = "import time\ntime.sleep(1.5)\nreturn torch.tensor(float('nan'), device=device)"
    monkeypatch.setattr(torch_pitfalls.helpers, "crowding", lambda: 8.0)
    assert run(corpus, timeout=0.5, broken=slow).outcome == "reproduced"
    monkeypatch.setattr(torch_pitfalls.helpers, "crowding", lambda: 1.0)
    assert run(corpus, timeout=0.5, broken=slow).outcome == "error"


def test_a_subprocess_timeout_is_the_machines_not_the_symptom(corpus):
    """A process a variant starts that outlives its limit is reported as the machine's timeout
    (an error naming it), never handed to the symptom as what the broken code did."""
    hang = "import subprocess, sys\nsubprocess.run([sys.executable, '-c', 'pass'], timeout=0.000001)"
    record = run(corpus, broken=hang)
    assert record.outcome == "error" and "the machine timed out, not the case" in record.detail


# An isolated run that crashes (SIGSEGV) or hangs deaf to its own limit (killed by this process)
# is checked on the faulty corpus's run (tests/run/test_hardening_faults.py: fault-segfault,
# fault-hang), which goes on beside this one: the same two records, one worker start each.


def test_an_isolated_cpu_run_reports_like_an_in_process_one_and_sees_no_gpu(corpus, monkeypatch):
    # What a machine without a GPU does: DataParallel, say, uses any visible GPU whatever
    # device the batch is on. The broken variant gives its NaN only where the GPUs are hidden,
    # and that NaN is what comes back from the worker, as an in-process run would report it.
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    hidden = "import os\nif os.environ.get('CUDA_VISIBLE_DEVICES') != '':\n    return torch.tensor(1.0)\nreturn torch.tensor(float('nan'))"
    record = run(corpus, isolate=("cpu",), broken=hidden)
    assert (record.outcome, record.isolated) == ("reproduced", True)
    assert "nan" in record.broken
    assert run(corpus, "in-process", broken=hidden).outcome == "mismatch"


def test_a_missing_optional_module_is_unverified_with_the_reason(corpus):
    record = run(corpus, requires=("no_such_module_for_pitfalls",))
    assert record.outcome == "unverified" and "no_such_module_for_pitfalls" in record.detail
    assert record.observed is None  # nothing ran: nothing is counted as observed


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has a GPU")
def test_cuda_is_skipped_with_the_reason_on_a_cpu_machine(corpus):
    record = run(corpus, device="cuda")
    assert record.outcome == "skipped" and record.detail.startswith("CUDA not available")


def test_forms_must_match_the_rule_that_applies(corpus):
    affects = "(Affects(versions='>=2.0', form='nan'),)"
    assert (
        run(corpus, "form-ok", affects=affects, symptom="return 'nan' if torch.isnan(run.value) else False").outcome
        == "reproduced"
    )
    record = run(corpus, "form-bad", affects=affects, symptom="return 'inf' if torch.isnan(run.value) else False")
    assert record.outcome == "mismatch" and "seen as 'inf', expected as 'nan'" in record.detail


def test_a_rule_can_narrow_to_one_device(corpus):
    affects = "(Affects(versions='>=2.0', device='cuda'),)"
    record = run(corpus, affects=affects)
    assert (record.expected, record.outcome) == (False, "mismatch")


# A fix is proven, not trusted: each of these "fixes" passes its own asserts, and none passes.
def test_a_fix_that_shows_the_symptom_fails(corpus):
    record = run(
        corpus,
        fixed="return torch.tensor([1.0, float('nan')], device=device)",
        symptom="return bool(torch.isnan(run.value).any())",
        check="assert run.value.numel() >= 1",
    )
    assert record.outcome == "fix-failed" and "the fixed variant shows the symptom" in record.detail


def test_a_check_that_accepts_the_broken_result_fails_where_the_symptom_shows(corpus):
    record = run(corpus, check="assert run.value.numel() == 1")
    assert record.outcome == "fix-failed"
    assert "its check accepts the broken result too" in record.detail
    assert record.check.startswith("accepts the broken result")


def test_a_check_that_rejects_the_fixed_result_fails(corpus):
    record = run(corpus, check="torch.testing.assert_close(run.value, torch.tensor(2.0, device=device))")
    assert record.outcome == "fix-failed" and "the fix's check rejects the fixed result" in record.detail


def test_a_check_returning_false_is_a_refusal(corpus):
    record = run(corpus, check="return bool(run.value == 2.0)")
    assert record.outcome == "fix-failed"


def test_where_nothing_tells_fix_from_broken_the_cell_is_unverified_not_absent(corpus):
    """The symptom needs another device (or torch): on this one the broken code behaves like
    the fix, so the cell proves nothing and says why."""
    same = "return torch.tensor(1.0, device=device)"
    record = run(corpus, devices=("cuda",), broken=same)
    assert (record.outcome, record.observed) == ("unverified", False)
    assert "the symptom needs cuda; this is cpu" in record.detail
    record = run(corpus, "old-case", affects="'<1.0'", broken=same)
    assert record.outcome == "unverified" and "not expected on torch" in record.detail


def test_the_proof_is_recorded(corpus):
    record = run(corpus)
    assert record.check.startswith("rejects the broken result: AssertionError")
    fp = record.fingerprints
    assert fp["broken"]["value"]["values"] == ["nan"] and fp["fixed"]["value"]["values"] == [1.0]


def test_a_required_module_that_does_not_import_is_unverified_with_its_error(corpus, monkeypatch):
    """A torchvision built for another torch is installed but fails at import: that is the
    environment's fault, so the cell is unverified with the error, not a case failure."""
    (corpus.root / "broken_extra_for_pitfalls.py").write_text(
        "raise RuntimeError('operator torchvision::nms does not exist')\n"
    )
    monkeypatch.syspath_prepend(str(corpus.root))
    record = run(corpus, requires=("broken_extra_for_pitfalls",))
    assert record.outcome == "unverified"
    assert "does not import here (RuntimeError: operator torchvision::nms does not exist)" in record.detail


def test_a_case_declaring_a_device_its_variants_never_use_is_refused(corpus):
    """devices=("cpu", "cuda") where neither variant reads its device: a CUDA cell would be a CPU
    run counted twice. The loader refuses it by name; declared device-independent, it loads and
    its cuda cell is skipped with the reason (never a reproduction)."""
    from torch_pitfalls.loader import LoadError

    ignores = dict(
        broken="return torch.tensor(float('nan'))",
        fixed="return torch.tensor(1.0)",
        check="torch.testing.assert_close(run.value, torch.tensor(1.0))",
    )
    with pytest.raises(LoadError, match="neither broken nor fixed uses its device argument"):
        load_case(corpus.plant("device-blind", **ignores))
    text = case_source("device-free", devices=("cpu",), **ignores).replace(
        "    requires=", "    device_independent=True,\n    requires="
    )
    lc = load_case(corpus.plant("device-free", text=text))
    assert run_case(lc, "cpu").outcome == "reproduced"
    cuda = run_case(lc, "cuda")
    assert cuda.outcome == "skipped" and "device-independent" in cuda.detail
    with pytest.raises(LoadError, match="device_independent=True, but broken uses its device argument"):
        load_case(
            corpus.plant(
                "device-claimed",
                text=case_source("device-claimed", devices=("cpu",)).replace(
                    "    requires=", "    device_independent=True,\n    requires="
                ),
            )
        )


MUTANT_FIXED = "return broken(device)"


@pytest.mark.parametrize(
    "fields",
    [
        {},  # a proven case: its check rejects the broken result
        {
            "broken": "import warnings\nwarnings.warn('old spelling')\nreturn torch.tensor(1.0, device=device)",
            "symptom": "return False",
            "affects": "'<1.0'",
        },  # a warning outside its range
        {"broken": "raise ValueError('no')", "symptom": "return isinstance(run.error, ValueError)"},
        {
            "check": "pass",
            "affects": "'<1.0'",
            "symptom": "return False",
            "broken": "return torch.tensor(1.0, device=device)",
        },  # nothing tells them apart here
        {"check": "pass"},  # a check that accepts anything, where the symptom shows
    ],
    ids=["proven", "warns", "raises", "indistinguishable", "weak-check"],
)
def test_the_recorded_mutant_is_the_outcome_of_the_mutated_copy(corpus, fields):
    """``Record.mutant`` (the broken run judged as a fix) is what running a copy whose ``fixed``
    calls ``broken`` gives: the mutation check needs no second run of the broken code."""
    original = run_case(load_case(corpus.plant("original", **fields)), "cpu")
    copy = run_case(load_case(corpus.plant("mutated", **{**fields, "fixed": MUTANT_FIXED})), "cpu")
    assert original.mutant == copy.outcome, (original, copy)
