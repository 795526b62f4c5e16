"""The watcher never hurts the program it watches, and keeps working beside torch.compile.

* torch.compile: a compiled function or module called again and again with the same shapes
  inside ``watch()`` compiles once, as it does unwatched. Code around it is watched as usual.
  Inside the compiled code it depends on the backend: the graph of ``backend="eager"`` runs as
  torch calls the watcher's ``TorchFunctionMode`` sees, so a pitfall there is reported (at the
  compiled function's ``def`` line: the frame the graph runs from); the graph
  of ``aot_eager`` runs below torch functions, so the same pitfall goes unreported, with no
  error; so does ``inductor``'s, the default (checked by hand: the same outcome, after 50 s of
  building C++ on a shared 2-core machine). While Dynamo traces, the mode passes every call
  straight through (``mode.py``); without that, Dynamo fails on the detectors' Python
  (InternalTorchDynamoError). The tests compile with a counting backend that runs the graph as it
  is (what ``backend="eager"`` does) and with ``aot_eager``: each compiles in under a second.
* Every case's fixed and broken variant returns bit for bit the same result with the watcher on
  as with it off (the same value, error, warnings and printed output), but where torch itself
  takes another path under any TorchFunctionMode (``FAST_PATH_OFF``: the same values to rounding).
* A detector that raises becomes one error line; the user's code runs on with its right result.
* A DataLoader with worker processes iterates alike under the watcher; the workers, forked with
  the watcher inside them, report nothing and break nothing.
* Everything the watcher switched on is switched off after the block, also when the block raised.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import warnings

import numpy as np
import pytest
import torch
from planting import ROOT, runs_other_interpreters, variant_run
from torch import nn
from torch.nn.modules import module as nn_module
from torch.optim import optimizer as optim_module

from torch_pitfalls.loader import load_cases
from torch_pitfalls.run.runner import not_run_reason, run_variant
from torch_pitfalls.watch import watch
from torch_pitfalls.watch.detectors.graphs import NanGradThroughMask
from torch_pitfalls.watch.detectors.softmax import SoftmaxSingletonAxis

CASES = load_cases(ROOT / "cases")


def maybe_watch(watched: bool, **options):
    return watch(**options) if watched else contextlib.nullcontext()


def lines_of(fn, text: str) -> int:
    """The line of ``fn``'s source whose text contains ``text``."""
    import inspect

    source, first = inspect.getsourcelines(fn)
    return next(first + i for i, line in enumerate(source) if text in line)


# -- torch.compile ------------------------------------------------------------------------------


def _dynamo_supported() -> bool:
    try:
        import torch._dynamo

        return torch._dynamo.is_dynamo_supported()
    except Exception:  # noqa: BLE001 - a torch or Python that torch.compile does not support
        return False


needs_compile = pytest.mark.skipif(not _dynamo_supported(), reason="torch.compile is not supported here")


def counting_backend():
    """A torch.compile backend that runs each graph as Dynamo captured it, and keeps each one."""
    graphs = []

    def backend(gm, example_inputs):
        graphs.append(gm)
        return gm.forward

    return backend, graphs


def softmax_over_one(x):
    y = torch.softmax(x.unsqueeze(1), dim=1)  # the pitfall: an axis of size 1
    return (y * x.unsqueeze(1)).sum()


def tiny_model():
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def compiled_steps(watched: bool, what: str, calls: int = 4):
    """``calls`` forward and backward passes of a compiled function or module: the graphs the
    backend was handed, the outputs and gradients, the warnings, and the watcher."""
    from torch._dynamo.utils import counters

    torch._dynamo.reset()
    counters.clear()
    backend, graphs = counting_backend()
    model = tiny_model()
    compiled = torch.compile(model if what == "module" else lambda x: model(x).relu().sum(), backend=backend)
    x = torch.randn(3, 4)
    results = []
    with maybe_watch(watched) as w, warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(calls):
            out = compiled(x).sum()
            out.backward()
            results.append((out.detach(), [p.grad.clone() for p in model.parameters()]))
    return len(graphs), counters["stats"]["unique_graphs"], results, [str(c.message) for c in caught], w


@needs_compile
@pytest.mark.parametrize("what", ["function", "module"])
def test_a_compiled_step_compiles_once_under_the_watcher(what):
    graphs_off, unique_off, results_off, warned_off, _ = compiled_steps(False, what)
    graphs_on, unique_on, results_on, warned_on, w = compiled_steps(True, what)
    assert (graphs_off, unique_off) == (1, 1)
    assert (graphs_on, unique_on) == (1, 1), "the watcher made torch.compile compile again"
    assert difference(results_on, results_off) is None
    assert (w.findings, w.errors) == ([], [])
    if what == "module":
        # torch's own notice, because the watcher's eval-without-no-grad detector puts global
        # forward hooks on every module (module.compile() does not warn)
        assert not warned_off
        assert [m for m in warned_on if "global hooks" in m] == warned_on and warned_on
    else:
        assert warned_on == warned_off == []


@needs_compile
def test_a_function_compiled_before_the_watcher_compiles_once_more_inside_it_and_no_more():
    """Compiled unwatched first, the function compiles once more inside the watcher (Dynamo
    guards on the torch-function mode stack), and never again for further calls, on or off."""
    torch._dynamo.reset()
    backend, graphs = counting_backend()
    compiled = torch.compile(softmax_over_one, backend=backend)
    x = torch.randn(4, 3, requires_grad=True)
    compiled(x)
    with watch():
        for _ in range(3):
            compiled(x)
    for _ in range(3):
        compiled(x)
    assert len(graphs) == 2


@needs_compile
def test_eager_code_around_a_compiled_function_is_still_watched():
    torch._dynamo.reset()
    backend, _ = counting_backend()
    compiled = torch.compile(lambda x: (x * 2).sum(), backend=backend)
    x = torch.randn(4, 3, requires_grad=True)
    with watch() as w:
        for _ in range(2):
            y = torch.softmax(x.unsqueeze(1), dim=1)  # the eager pitfall
            compiled(y)
    assert w.errors == []
    assert [(f.case, f.line, f.count) for f in w.findings] == [
        (
            "softmax-singleton-axis",
            lines_of(test_eager_code_around_a_compiled_function_is_still_watched, "# the eager pitfall"),
            2,
        )
    ]


@needs_compile
@pytest.mark.parametrize("backend", ["counting", "aot_eager"])
def test_a_pitfall_inside_compiled_code_is_reported_only_where_the_graph_runs_torch_calls(backend):
    torch._dynamo.reset()
    compiled = torch.compile(softmax_over_one, backend=counting_backend()[0] if backend == "counting" else backend)
    x = torch.randn(4, 3, requires_grad=True)
    with watch() as w:
        for _ in range(3):
            compiled(x).backward()
    assert w.errors == []
    found = [(f.case, f.line, f.count) for f in w.findings]
    if backend == "counting":
        # the graph's torch.softmax reaches the mode at run time; the innermost user frame is the
        # one Dynamo runs the graph from, and its line is the compiled function's `def`
        assert found == [("softmax-singleton-axis", lines_of(softmax_over_one, "def softmax_over_one"), 3)]
    else:  # the graph runs ATen ops: skipped, silently
        assert found == []


# -- the same results, watched or not --------------------------------------------------------------


def _bits(t: torch.Tensor) -> torch.Tensor | None:
    if t.layout != torch.strided or t.is_quantized:
        return None
    flat = t.detach().cpu().contiguous().reshape(-1)
    return flat if flat.dtype == torch.bool else flat.view(torch.uint8)


def difference(a, b, where: str = "result") -> str | None:  # noqa: C901 - one branch per kind of value
    """Where ``a`` and ``b`` differ, or None when they are the same bit for bit: tensors by dtype,
    device, shape, layout, autograd flags, bytes (NaN payloads and -0.0 included) and a leaf's
    ``.grad``; containers item by item, objects by their fields."""
    if type(a) is not type(b):
        return f"{where}: {type(a).__name__} against {type(b).__name__}"
    if isinstance(a, torch.Tensor):
        for attr in ("dtype", "device", "shape", "layout", "requires_grad", "is_leaf"):
            if getattr(a, attr) != getattr(b, attr):
                return f"{where}.{attr}: {getattr(a, attr)} against {getattr(b, attr)}"
        if a.device.type != "meta":  # a meta tensor has no values
            bits_a, bits_b = _bits(a), _bits(b)
            same = torch.equal(bits_a, bits_b) if bits_a is not None else torch.equal(a, b)
            if not same:
                return f"{where}: the values differ ({a!r} against {b!r})"
        if a.is_leaf and a.requires_grad:
            return difference(a.grad, b.grad, f"{where}.grad")
        return None
    if isinstance(a, np.ndarray):
        same = (a.dtype, a.shape, a.tobytes()) == (b.dtype, b.shape, b.tobytes())
        return None if same else f"{where}: the arrays differ"
    if isinstance(a, float):
        same = (a == b and math.copysign(1, a) == math.copysign(1, b)) or (a != a and b != b)
        return None if same else f"{where}: {a!r} against {b!r}"
    if isinstance(a, dict):
        if list(a) != list(b):
            return f"{where}: keys {list(a)} against {list(b)}"
        return next((d for k in a if (d := difference(a[k], b[k], f"{where}[{k!r}]"))), None)
    if isinstance(a, (list, tuple)):
        if len(a) != len(b):
            return f"{where}: {len(a)} items against {len(b)}"
        return next((d for i, (x, y) in enumerate(zip(a, b)) if (d := difference(x, y, f"{where}[{i}]"))), None)
    if isinstance(a, BaseException):
        return difference((str(a), a.args), (str(b), b.args), f"{where} ({type(a).__name__})")
    if isinstance(a, nn.Module):
        return difference(a.state_dict(), b.state_dict(), f"{where}.state_dict()")
    if dataclasses.is_dataclass(a):
        return difference(dataclasses.asdict(a), dataclasses.asdict(b), where)
    if isinstance(a, (int, str, bytes, complex, type(None), torch.dtype, torch.device, type)):
        return None if a == b else f"{where}: {a!r} against {b!r}"
    if hasattr(a, "__dict__"):
        return difference(vars(a), vars(b), f"{where}.__dict__")
    return None if a == b else f"{where}: {a!r} against {b!r}"


def observed(obs) -> dict:
    """All a program sees of a run: its value, its error, its warnings, what it printed."""
    return {
        "value": obs.value,
        "error": obs.error,
        "warnings": [(w.category, str(w.message)) for w in obs.warnings],
        "printed": obs.output,
    }


# Variants that start other interpreters (run_python, spawned ranks): nothing of theirs runs under
# this process's watcher, and they cost seconds.


def not_swept_reason(lc) -> str | None:
    if "cpu" in lc.case.isolate:
        return "isolated on the cpu: the harness runs it in its own process"
    if runs_other_interpreters(lc.path):
        return "its variants start other interpreters"
    return not_run_reason(lc, "cpu")


@pytest.mark.parametrize("lc", CASES, ids=lambda lc: lc.id)
def test_every_variant_gives_the_same_result_watched(lc):
    """As the harness runs a variant (``run_variant``: every global RNG seeded with 0, in a scratch
    folder, its global state guarded): unwatched, then watched. Where they differ, a second
    unwatched run tells a variant that is not deterministic from a watcher that changed it."""
    reason = not_swept_reason(lc)
    if reason:
        pytest.skip(reason)
    for variant in ("fixed", "broken"):
        fn = getattr(lc.module, variant)
        first = observed(variant_run(lc, variant))  # the run the predicates and the explainer read too
        with watch() as w:
            watched = observed(run_variant(fn, "cpu", lc.case.timeout, variant))
        if difference(watched, first, variant) is not None:  # the watcher's, or the variant's own?
            again = observed(run_variant(fn, "cpu", lc.case.timeout, variant))
            assert difference(again, first) is None, f"{variant}: not deterministic unwatched"
        assert difference(watched, first, variant) is None
        assert w.errors == [], (variant, w.errors)


# -- a detector that raises -----------------------------------------------------------------------


def softmax_twice(x):
    return [torch.softmax(x, dim=1) for _ in range(2)]


def nan_grad_steps(x):
    grads = []
    for _ in range(2):
        x.grad = None
        y = x / torch.tensor([0.0, 1.0])
        y[1].backward()  # a NaN gradient through a mask
        grads.append(x.grad.clone())
    return grads


FAILING = {  # the detector method made to raise, and user code that calls it twice
    "before": (SoftmaxSingletonAxis, "before", softmax_twice, lambda: torch.randn(3, 1, requires_grad=True)),
    "after": (NanGradThroughMask, "after", nan_grad_steps, lambda: torch.ones(2, requires_grad=True)),
}


@pytest.mark.parametrize("which", list(FAILING))
def test_a_detector_that_raises_is_one_error_line_and_the_program_runs_on(which, monkeypatch):
    detector, method, user_code, make_input = FAILING[which]
    expected = user_code(make_input())
    calls = []

    def boom(self, *args):
        calls.append(args)
        raise RuntimeError("boom")

    monkeypatch.setattr(detector, method, boom)
    with watch() as w:
        got = user_code(make_input())
        wrapped = torch.tensor([300.0]).byte()  # another detector's pitfall, still reported
    assert difference(got, expected) is None
    assert wrapped.item() == 44
    assert w.errors == [f"{detector.__name__} ({detector.case}): RuntimeError: boom"]
    assert len(calls) == 1, "a detector that failed is switched off"
    assert [f.case for f in w.findings] == ["uint8-conversion-wraparound"]
    assert "watcher error (your program was not affected)" in w.text()


# -- DataLoader workers ------------------------------------------------------------------------------


class WrappingData(torch.utils.data.Dataset):
    """Each item holds a uint8 wraparound, so the workers run a pitfall under the inherited watcher."""

    def __len__(self):
        return 8

    def __getitem__(self, i):
        x = torch.arange(4, dtype=torch.float32) + 300.0 + i
        return x.byte(), x  # values past 255: the worker's pitfall


def load_all(num_workers: int, watched: bool):
    loader = torch.utils.data.DataLoader(WrappingData(), batch_size=2, num_workers=num_workers)
    with maybe_watch(watched) as w:
        batches = []
        for small, x in loader:
            batches.append((small, x, (x * 3).byte()))  # the main process's pitfall
    return batches, w


def test_a_dataloader_with_workers_iterates_alike_and_its_workers_report_nothing():
    expected, _ = load_all(0, watched=False)
    in_process, w0 = load_all(0, watched=True)
    with_workers, w2 = load_all(2, watched=True)
    assert difference(in_process, expected) is None and difference(with_workers, expected) is None
    assert w0.errors == w2.errors == []
    main_line = lines_of(load_all, "the main process's pitfall")
    worker_line = lines_of(WrappingData.__getitem__, "the worker's pitfall")
    # without workers: both places, once each with their counts (every item, every batch)
    assert sorted((f.line, f.count) for f in w0.findings) == sorted([(worker_line, 8), (main_line, 4)])
    # with workers: the main process's place alone; nothing from the workers, not even once
    assert [(f.case, f.line, f.count) for f in w2.findings] == [("uint8-conversion-wraparound", main_line, 4)]


# -- everything switched off afterwards ----------------------------------------------------------


def switched_on_state() -> dict:
    """What the watcher or its detectors change while on: patched functions, the warning hook,
    torch's global module and optimizer hooks, the torch-function mode stack."""
    from torch.overrides import _get_current_function_mode_stack

    state = {
        "nn.Module._apply": nn.Module._apply,
        "nn.Module.load_state_dict": nn.Module.load_state_dict,
        "nn.Module.state_dict": nn.Module.state_dict,
        "DataLoader.__init__": torch.utils.data.DataLoader.__init__,
        "_BaseDataLoaderIter.__next__": torch.utils.data.dataloader._BaseDataLoaderIter.__next__,
        "torch.no_grad.__enter__": torch.no_grad.__enter__,
        "torch.Tensor.require_grad": vars(torch.Tensor).get("require_grad"),
        "torch.from_numpy": torch.from_numpy,
        "warnings.showwarning": warnings.showwarning,
        "torch-function modes": list(_get_current_function_mode_stack()),
    }
    for owner, module in (("nn.modules.module", nn_module), ("optim.optimizer", optim_module)):
        for name, value in vars(module).items():
            if name.startswith("_global_"):
                state[f"{owner}.{name}"] = dict(value) if isinstance(value, dict) else value
    return state


SWITCHED_ON = {
    "nn.Module._apply",
    "nn.Module.load_state_dict",
    "nn.Module.state_dict",
    "DataLoader.__init__",
    "_BaseDataLoaderIter.__next__",
    "torch.no_grad.__enter__",
    "torch.Tensor.require_grad",
    "torch.from_numpy",
    "warnings.showwarning",
    "torch-function modes",
    "nn.modules.module._global_forward_pre_hooks",
    "nn.modules.module._global_forward_hooks",
    "nn.modules.module._global_parameter_registration_hooks",
    "optim.optimizer._global_optimizer_pre_hooks",
}


def changed(before: dict, after: dict) -> list[str]:
    return [k for k in before if before[k] != after[k] and before[k] is not after[k]]


def user_code_that_triggers_every_detector():
    model = nn.Linear(2, 2)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    model.extra = torch.ones(2)
    model.double()  # unregistered-tensor-attribute (the patched _apply)
    model.weight = nn.Parameter(torch.ones(2, 2, dtype=torch.float64))  # the parameter registration hook
    t = torch.from_numpy(np.zeros(2, dtype=np.float64))  # the patched from_numpy
    t.add_(1)
    model.eval()
    model(t)  # the forward hooks: an output with a graph in eval mode, freed with no backward
    model.train()
    model(t).sum().backward()
    opt.step()  # the optimizer step hook: it steps the replaced parameter
    warnings.warn("a warning of the user's")  # the patched showwarning


@pytest.mark.parametrize("ending", ["returns", "raises"])
def test_the_watcher_restores_what_it_switched_on(ending):
    before = switched_on_state()
    with contextlib.suppress(KeyError), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch() as w:
            assert set(changed(before, switched_on_state())) >= SWITCHED_ON  # what the test looks at
            user_code_that_triggers_every_detector()
            if ending == "raises":
                raise KeyError("the user's error")
    assert {f.case for f in w.findings} == {
        "unregistered-tensor-attribute",
        "from-numpy-shares-memory",
        "eval-without-no-grad",
        "param-reassignment-detaches-optimizer",
    }
    assert changed(before, switched_on_state()) == []


def test_the_watcher_restores_what_failed_detectors_switched_on(monkeypatch):
    from torch_pitfalls.watch.detectors.eval_mode import EvalWithoutNoGrad
    from torch_pitfalls.watch.detectors.modules import UnregisteredTensorAttribute
    from torch_pitfalls.watch.detectors.numpy_memory import FromNumpySharesMemory
    from torch_pitfalls.watch.detectors.optim import ParamReassignmentDetachesOptimizer

    def boom(self, *args):
        raise RuntimeError("boom")

    for cls, method in (
        (UnregisteredTensorAttribute, "check"),
        (ParamReassignmentDetachesOptimizer, "_note"),
        (FromNumpySharesMemory, "before"),
        (EvalWithoutNoGrad, "_watch_output"),
    ):
        monkeypatch.setattr(cls, method, boom)
    before = switched_on_state()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with watch() as w:
            user_code_that_triggers_every_detector()
    left_on = changed(before, switched_on_state())
    for d in w.detectors:  # switch off by hand what the watcher left on, so no other test runs under it
        d.stop()
    assert len(w.errors) == 4, w.errors
    assert left_on == []


@pytest.mark.skipif(
    not hasattr(torch._C, "_pop_torch_function_stack"), reason="torch 1.13: one function mode, no stack to edit"
)
def test_an_optimizer_step_runs_with_the_mode_set_aside_and_its_closure_with_it():
    """The watcher does not look into an optimizer's step: its ops skip the mode (the cost of a
    watched step), while the closure the step calls is the user's code and is watched; a step that
    raises leaves the mode stack as it found it."""
    seen = []

    class Probe(torch.optim.SGD):
        def step(self, closure=None):
            seen.append(("step", torch._C._len_torch_function_stack()))
            if closure is not None:
                closure()
            seen.append(("after closure", torch._C._len_torch_function_stack()))
            return super().step() if not getattr(self, "fail", False) else 1 / 0

    def closure():
        seen.append(("closure", torch._C._len_torch_function_stack()))
        return model(torch.ones(1, 2)).sum()

    model = nn.Linear(2, 1)
    opt = Probe(model.parameters(), lr=0.1)
    with watch():
        seen.append(("forward", torch._C._len_torch_function_stack()))
        opt.step(closure)
        opt.fail = True
        with pytest.raises(ZeroDivisionError):
            opt.step()
    assert seen[:4] == [("forward", 1), ("step", 0), ("closure", 1), ("after closure", 0)], seen
    assert torch._C._len_torch_function_stack() == 0
    with watch() as w:  # and the next watcher works as before
        torch.softmax(torch.randn(3, 1, requires_grad=True), dim=1)
    assert [f.case for f in w.findings] == ["softmax-singleton-axis"]
