# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A checkpoint with NumPy values in it stops loading on 2.6
#
# A training script saves `{"model": model.state_dict(), "best_score": np.mean(scores),
# "pixel_mean": mean}`: the best validation score came out of NumPy as a `numpy.float64`, and the
# normalisation statistics are a NumPy array. It resumes with `torch.load(path,
# map_location=device)`. On 2.4 and 2.5 the load prints a `FutureWarning` about `weights_only`;
# on 2.6 it raises `_pickle.UnpicklingError: Weights only load failed ... Unsupported global:
# GLOBAL numpy._core.multiarray.scalar was not an allowed global by default` (or
# `numpy.core.multiarray._reconstruct` for the array; `numpy.core` with NumPy 1). The weights are
# fine: one stray NumPy number beside them is enough. The error suggests allowlisting `scalar`,
# and doing only that fails again, on `numpy.dtype`, and then on `numpy.dtypes.Float64DType`.

# %%
import argparse
import os
import pickle
import tempfile

import numpy as np
import torch

from torch_pitfalls import observe

SCORES = [0.75, 0.8125, 0.875, 0.8125]  # validation scores of four epochs
PIXEL_MEAN = [0.5, 0.25, 0.125]  # per-channel statistics of the training set


def _save_checkpoint(folder, device):
    """What many training scripts write: the weights, and numbers that came out of NumPy."""
    path = os.path.join(folder, "checkpoint.pt")
    torch.save(
        {
            "model": {"weight": torch.arange(6.0, device=device).reshape(2, 3)},
            "best_score": np.mean(SCORES),  # a numpy.float64, not a float
            "pixel_mean": np.array(PIXEL_MEAN, dtype=np.float32),
        },
        path,
    )
    return path


def _resumed(checkpoint):
    return {
        "weight": checkpoint["model"]["weight"],
        "best_score": checkpoint["best_score"],
        "pixel_mean": checkpoint["pixel_mean"],
    }


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        checkpoint = torch.load(path, map_location=device)  # weights_only left to its default
        return _resumed(checkpoint)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `weights_only=True` (the default since 2.6) loads through an unpickler that refuses every global
# it was not told about. A NumPy value is pickled as a call to one of NumPy's rebuild functions:
# `numpy.core.multiarray.scalar(dtype, bytes)` for a scalar, `_reconstruct(ndarray, ...)` followed
# by a state for an array, and both carry a `numpy.dtype` whose concrete class
# (`numpy.dtypes.Float64DType` on NumPy 1.26 and 2: one class per dtype) is only met when the
# unpickler sets its state. Torch's maintainers left NumPy off the default list on purpose
# (pytorch/pytorch#137444, below), so each of these has to be allowlisted, and the error names them
# one at a time: allowlisting `scalar` as the message suggests only moves the failure to
# `numpy.dtype` (the refusal ezyang quotes in pytorch/pytorch#146886), and allowlisting `dtype`
# moves it to the dtype's class (pytorch/pytorch#139302). The names also depend on the NumPy that
# wrote the file: NumPy 2 writes `numpy._core`, NumPy 1 `numpy.core`.
#
# ## The fix
# Keep the safe loader and allowlist what the file needs, for this load only: the
# `torch.serialization.safe_globals([...])` context manager with `scalar`, `_reconstruct`,
# `ndarray`, `dtype` and the dtype classes of the values saved (`type(np.dtype(np.float64))`
# names the class without importing `numpy.dtypes`). The context manager exists from 2.5 on (observed: absent on
# 2.4.1, present on 2.5.1); 2.4 has only `add_safe_globals`, which changes a process-wide list.
# Before 2.5 the guard falls back to `weights_only=False` for a file you wrote yourself, which
# does not warn when it is passed. The fix is quiet on every release from 1.13.1 to 2.15.0. For
# new checkpoints, the simplest fix is upstream of the load: save `float(np.mean(scores))` and
# `torch.from_numpy(mean)`, and the file loads with `weights_only=True` everywhere.


# %%
def _numpy_globals():
    """The globals a pickle of float64 scalars and float32 arrays names."""
    try:
        from numpy._core.multiarray import _reconstruct, scalar  # NumPy 2 (1.26 has the alias)
    except ImportError:
        from numpy.core.multiarray import _reconstruct, scalar  # older NumPy
    dtype_classes = [type(np.dtype(t)) for t in (np.float64, np.float32)]
    return [scalar, _reconstruct, np.ndarray, np.dtype, *dtype_classes]


def fixed(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        if hasattr(torch.serialization, "safe_globals"):  # torch >= 2.5: allowlist for this load only
            with torch.serialization.safe_globals(_numpy_globals()):
                checkpoint = torch.load(path, map_location=device, weights_only=True)
        else:  # torch < 2.5: our own file, loaded as before (quiet when the argument is passed)
            checkpoint = torch.load(path, map_location=device, weights_only=False)
        return _resumed(checkpoint)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#129239 (2.4) added the `FutureWarning` for a `torch.load` without
# `weights_only`, #137602 flipped the default in 2.6 (listed among the 2.6.0 release notes'
# backwards incompatible changes), #124331 added `add_safe_globals` (2.4) and #127939 the
# `safe_globals` context manager (2.5). #134346 improved the message for classes such as NumPy's
# dtype classes, which only show up when their state is set, and a maintainer's review on #135356
# gives `type(np.dtype(np.int32))` as the way to name one. The maintainers state their position in
# their own threads: pytorch/pytorch#137444 (mikaylagawarecki, October 2024) records, "with the
# move to `weights_only` by default", an "explicit decision not to allowlist GLOBALs required to
# deserialize `numpy` tensors" by default (it links the torch_xla report pytorch/xla#7799); when
# ezyang proposed adding `numpy.core.multiarray.scalar` to the default safe globals because Suno
# bark's checkpoints need it (pytorch/pytorch#146885, February 2025), malfet replied that "it's
# hard to claim that any object from 3rd-party library is safe"; ezyang's pytorch/pytorch#146886,
# filed the same day, quotes the next refusal, `numpy.dtype`; and pytorch/pytorch#139302
# (mikaylagawarecki) shows a NumPy array that fails to load with `np.dtype` allowlisted until
# `type(np.dtype(np.float32))` is added too, which the 2.13.0 unpickler still requires (it builds
# only types that are themselves allowlisted). Downstream, the NumPy form is reported again and
# again: suno-ai/bark#626 (`numpy.core.multiarray.scalar` in the released checkpoints) and #656 (a
# user who allowlisted `scalar` still cannot load them), MIC-DKFZ/nnUNet#2681 (v2 models stop
# loading), nerfstudio-project/nerfstudio#3702 (a bare NumPy scalar in the saved state),
# HorizonRobotics/alf#1754 (a step counter saved as a NumPy value, fixed by saving a tensor).
# Observed on the CPU with this case: quiet on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the
# `FutureWarning` on 2.4.1 and 2.5.1; the `UnpicklingError` on 2.6.0, 2.13.0 and 2.15.0 (on 2.13.0
# it names `numpy._core.multiarray.scalar`: the matrix pairs torch 2.3 and later with NumPy 2, and
# the releases before with NumPy 1.26, which pickles `numpy.core.multiarray`). The fix takes the
# `safe_globals` branch from 2.5.1 on and the `weights_only=False` branch before.

# %% [markdown]
# ## How the harness checks it
#
# The same error for another class is another pitfall with another fix. A checkpoint that
# pickled the run's `argparse.Namespace` fails on 2.6 with the same `UnpicklingError` and the same
# paragraph about the changed default, naming `argparse.Namespace` (the case
# torch-load-weights-only-default); no NumPy allowlist loads it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def _holds_numpy(value) -> bool:
    return isinstance(value, dict) and any(isinstance(v, (np.generic, np.ndarray)) for v in value.values())


def symptom(run):
    """2.6 on: the weights-only unpickler refuses NumPy's rebuild functions; 2.4-2.5: the warning
    that it will, on a load that returned NumPy values."""
    if run.raised(pickle.UnpicklingError, r"weights.only") and run.raised(
        pickle.UnpicklingError, r"numpy\.(_core|core)\.multiarray\.(scalar|_reconstruct)"
    ):
        return "UnpicklingError"
    if run.error is None and run.warned(FutureWarning, r"weights_only.*default") and _holds_numpy(run.value):
        return "FutureWarning"
    return False


def near_miss(device):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pt")
        torch.save({"model": {"weight": torch.ones(2, device=device)}, "args": argparse.Namespace(lr=0.1)}, path)
        return torch.load(path, map_location=device)


def check(run, device):
    """The resumed weight, best score and statistics are the values written by hand, the NumPy
    values came back as NumPy values, and the load neither raised nor warned."""
    assert run.error is None and run.value is not None, "the checkpoint did not load"
    torch.testing.assert_close(run.value["weight"], torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device))
    assert isinstance(run.value["best_score"], np.float64) and run.value["best_score"] == 0.8125
    mean = run.value["pixel_mean"]
    assert isinstance(mean, np.ndarray) and mean.dtype == np.float32 and mean.tolist() == PIXEL_MEAN
    assert not run.warnings, f"the load warned: {run.warnings[0].message}"


CASE = Case(
    id="weights-only-numpy-in-checkpoint",
    title="A checkpoint with NumPy values in it stops loading on 2.6",
    kind="error",
    symptom_category="error",
    symptom_line="A checkpoint holding NumPy values stops loading on torch 2.6: Weights only load failed.",
    affects=(
        Affects(
            versions=">=2.4,<2.6",
            form="FutureWarning",
            reason="weights_only left out: FutureWarning that the default will flip, and the NumPy values "
            "still load (observed on 2.4.1 and 2.5.1)",
            issue="https://github.com/pytorch/pytorch/pull/129239",
        ),
        Affects(
            versions=">=2.6",
            form="UnpicklingError",
            reason="weights_only defaults to True and the restricted unpickler refuses NumPy's scalar and "
            "array rebuild functions (observed from 2.6.0 on)",
            issue="https://github.com/pytorch/pytorch/pull/137602",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.6.0").at("Backwards Incompatible Changes: torch.load defaults to weights_only=True"),),
    tags=("upgrade", "serialization", "torch_load", "weights_only", "numpy"),
    references=(
        "https://github.com/pytorch/pytorch/pull/137602",  # the default flips to True (2.6)
        "https://github.com/pytorch/pytorch/pull/129239",  # FutureWarning when weights_only is left out (2.4)
        "https://github.com/pytorch/pytorch/pull/124331",  # add_safe_globals (2.4)
        "https://github.com/pytorch/pytorch/pull/127939",  # the safe_globals context manager (2.5)
        "https://github.com/pytorch/pytorch/pull/134346",  # dtype classes only show up at BUILD
        "https://github.com/pytorch/pytorch/pull/137444",  # maintainers: NumPy kept off the default list
        "https://github.com/pytorch/pytorch/issues/146885",  # ezyang: scalar as a default safe global; malfet demurs
        "https://github.com/pytorch/pytorch/issues/146886",  # ezyang: after scalar, numpy.dtype is refused
        "https://github.com/pytorch/pytorch/pull/139302",  # mikaylagawarecki: np.dtype allowed, its class still refused
        "https://github.com/pytorch/xla/issues/7799",  # torch_xla's report, linked from #137444
        "https://github.com/suno-ai/bark/issues/626",  # downstream: numpy.core.multiarray.scalar in bark's checkpoints
        "https://github.com/suno-ai/bark/issues/656",  # downstream: allowlisting scalar alone "has no effect"
        "https://github.com/MIC-DKFZ/nnUNet/issues/2681",  # nnU-Net v2 models stop loading on 2.6
        "https://github.com/nerfstudio-project/nerfstudio/pull/3702",  # a bare NumPy scalar in the state
        "https://github.com/HorizonRobotics/alf/pull/1754",  # global_step saved as NumPy: _reconstruct
    ),
)
