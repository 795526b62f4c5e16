"""torch_pitfalls.run.state: what a variant changes is a leak; what a module's first import sets is not."""

from __future__ import annotations

import os
import subprocess
import sys
import types
import warnings

import pytest

from torch_pitfalls.helpers import stretched
from torch_pitfalls.run import state

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODULE = "pitfalls_planted_module"


@pytest.fixture
def planted(monkeypatch):
    """A planted module (not imported yet) that sets PITFALLS_PLANTED_CACHE on its first import.
    The snapshot is each test's own (pytest changes PYTEST_CURRENT_TEST between setup and call)."""
    monkeypatch.setitem(state.SET_ON_IMPORT, "PITFALLS_PLANTED_CACHE", MODULE)
    for name in ("PITFALLS_PLANTED_CACHE", "PITFALLS_PLANTED_OTHER"):
        monkeypatch.delenv(name, raising=False)


def test_a_variable_a_module_sets_on_its_first_import_is_not_a_leak(planted, monkeypatch):
    before = state.snapshot()
    monkeypatch.setitem(sys.modules, MODULE, types.ModuleType(MODULE))
    monkeypatch.setenv("PITFALLS_PLANTED_CACHE", "/somewhere")
    assert state.leaks(before) == []


def test_the_same_variable_set_without_that_import_is_a_leak_and_restored(planted, monkeypatch):
    before = state.snapshot()
    monkeypatch.setenv("PITFALLS_PLANTED_CACHE", "/somewhere")
    assert state.leaks(before) == ["environment variables"]
    state.restore(before)
    assert "PITFALLS_PLANTED_CACHE" not in os.environ


def test_another_variable_set_beside_that_import_is_a_leak(planted, monkeypatch):
    before = state.snapshot()
    monkeypatch.setitem(sys.modules, MODULE, types.ModuleType(MODULE))
    monkeypatch.setenv("PITFALLS_PLANTED_OTHER", "1")
    assert state.leaks(before) == ["environment variables"]


def test_a_path_a_module_appends_on_its_first_import_is_not_a_leak(monkeypatch):
    # torch.distributed.nn.jit.instantiator appends its template folder to sys.path when torch._dynamo
    # first imports it (the first zero_grad() on 2.2-2.9): an import side effect, not the variant's.
    monkeypatch.setitem(state.PATH_ON_IMPORT, MODULE, lambda m: m.TEMPLATE_DIR)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = state.snapshot()
    planted = types.ModuleType(MODULE)
    planted.TEMPLATE_DIR = "/tmp/pitfalls-planted-templates"
    monkeypatch.setitem(sys.modules, MODULE, planted)
    sys.path.append(planted.TEMPLATE_DIR)
    assert state.leaks(before) == []
    sys.path.append("/tmp/pitfalls-planted-other")  # beside it, a path the variant added: a leak
    assert state.leaks(before) == ["sys.path"]
    state.restore(before)
    assert sys.path == before["sys.path"][0]


SETUPTOOLS = """
import sys
from torch_pitfalls.run import state
assert "setuptools" not in sys.modules
before = state.snapshot()
import setuptools  # >= 70 appends its _vendor folder to sys.path
print(state.leaks(before))
"""


def test_setuptools_first_import_in_a_variant_leaks_nothing():
    pytest.importorskip("setuptools")
    done = subprocess.run(
        [sys.executable, "-c", SETUPTOOLS],
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": ROOT},
        timeout=stretched(120),
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[]", done.stdout


def test_the_same_path_appended_without_that_import_is_a_leak(monkeypatch):
    monkeypatch.setitem(state.PATH_ON_IMPORT, MODULE, lambda m: m.TEMPLATE_DIR)
    monkeypatch.setattr(sys, "path", list(sys.path))
    before = state.snapshot()
    sys.path.append("/tmp/pitfalls-planted-templates")
    assert state.leaks(before) == ["sys.path"]


def test_a_builtin_category_filter_a_module_adds_on_its_first_import_is_not_a_leak(monkeypatch):
    # torch._dynamo's first import on 2.1-2.2 adds ("ignore", UserWarning, module="torch.distributed")
    monkeypatch.setitem(state.FILTERS_ON_IMPORT, ("ignore", "UserWarning", "pitfalls_planted"), MODULE)
    with warnings.catch_warnings():
        before = state.snapshot()
        warnings.filterwarnings("ignore", category=UserWarning, module="pitfalls_planted")
        assert state.leaks(before) == ["warning filters"]  # not imported during the variant: a leak
        monkeypatch.setitem(sys.modules, MODULE, types.ModuleType(MODULE))
        assert state.leaks(before) == []
        warnings.filterwarnings("ignore", category=UserWarning, module="pitfalls_other")
        assert state.leaks(before) == ["warning filters"]


PROGRAM = """
import os, sys, torch
from torch_pitfalls.run import state
assert "torch._dynamo" not in sys.modules, "imported up front again"
before = state.snapshot()
opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1)
opt.step()  # the first step imports torch._dynamo, which sets TORCHINDUCTOR_CACHE_DIR
print("imported" if "torch._dynamo" in sys.modules else "not imported", state.leaks(before))
"""


def test_the_first_optimizer_step_of_a_fresh_process_leaks_nothing():
    env = {k: v for k, v in os.environ.items() if k != "TORCHINDUCTOR_CACHE_DIR"}
    env["PYTHONPATH"] = ROOT
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, env=env, timeout=stretched(120)
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split()[0] == "imported" and done.stdout.strip().endswith("[]"), done.stdout


def test_a_cuda_context_poisoned_by_a_device_assert_is_not_a_failure_of_the_guard(monkeypatch):
    # After a device-side assert every CUDA call raises (torch.AcceleratorError, a RuntimeError,
    # seen on 2.11.0+cu130): an isolated case's symptom, not something the guard should raise.
    monkeypatch.setattr(state.torch.cuda, "is_initialized", lambda: False)
    before = state.snapshot()

    def poisoned():
        raise RuntimeError("CUDA error: device-side assert triggered")

    monkeypatch.setattr(state.torch.cuda, "is_initialized", lambda: True)
    monkeypatch.setattr(state.torch.cuda, "get_rng_state_all", poisoned)
    assert state.leaks(before) == []
