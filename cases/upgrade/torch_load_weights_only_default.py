# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A checkpoint that stores `argparse` arguments stops loading on 2.6
#
# A training script saves `{"model": model.state_dict(), "args": args}`, where `args` is the
# `argparse.Namespace` of the run, and resumes with `torch.load(path, map_location=device)`.
# On 2.4 and 2.5 the load prints a `FutureWarning` about `weights_only` that is easy to scroll
# past. On 2.6 the same line raises `_pickle.UnpicklingError: Weights only load failed ...
# Unsupported global: GLOBAL argparse.Namespace was not an allowed global by default`. The file
# did not change; the default of `torch.load` did, and the checkpoint the run wrote yesterday
# can no longer be resumed.

# %%
import argparse
import os
import pickle
import tempfile

import torch

from torch_pitfalls import observe


def _save_checkpoint(folder, device):
    """What many training scripts write: the weights and the run's command-line arguments."""
    path = os.path.join(folder, "checkpoint.pt")
    args = argparse.Namespace(lr=0.1, epochs=3, arch="linear")
    model_state = {"weight": torch.arange(6.0, device=device).reshape(2, 3)}
    torch.save({"model": model_state, "args": args}, path)
    return path


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        checkpoint = torch.load(path, map_location=device)  # weights_only left to its default
        return {"weight": checkpoint["model"]["weight"], "lr": checkpoint["args"].lr}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.load` is `pickle` underneath, and a pickle can import and call anything, so loading a
# file from elsewhere can run code. The restricted unpickler behind `weights_only=True` (since
# 1.13) only rebuilds tensors, storages, numbers, strings and plain containers, and anything
# else (a `Namespace`, a NumPy scalar, a whole `nn.Module`) has to be allowlisted. Torch 2.4
# started to warn when the argument was left out, and 2.6 made `True` the default. For a
# state_dict of tensors nothing changes; for a checkpoint that also pickled a Python object it
# goes from a warning to an error in one upgrade.
#
# ## The fix
# For a file you wrote yourself, say so: `torch.load(path, map_location=device,
# weights_only=False)` loads it as before, quietly, on every release from 1.13.1 to 2.15.0.
# Never do that for a file from elsewhere. Going forward, save `vars(args)` (a dict of plain
# values) instead of the `Namespace`; such a checkpoint loads with `weights_only=True`
# everywhere. Allowlisting the class (`torch.serialization.add_safe_globals([argparse.Namespace])`)
# is the third way, but it only exists from 2.4 on, so it cannot be the portable spelling.


# %%
def fixed(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        checkpoint = torch.load(path, map_location=device, weights_only=False)  # our own file
        return {"weight": checkpoint["model"]["weight"], "lr": checkpoint["args"].lr}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#129239 ("Add warning for weights_only", 2.4) added the `FutureWarning`;
# #137602 ("Flip default on weights_only", 2.6) flipped the default, announced on the PyTorch
# dev-discuss forum as a BC-breaking change and listed among the 2.6.0 release notes' backwards
# incompatible changes. The error's own text names the class and offers `add_safe_globals` or
# `weights_only=False`. Downstream, ROCm/Megatron-LM#56 quotes exactly this error for
# `argparse.Namespace` and fixes it with `weights_only=False`, and chemprop/chemprop#1227 reports
# v1 checkpoints (which store the args) failing to load on 2.6. Observed on the CPU with this
# case: quiet on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the `FutureWarning` on 2.4.1 and 2.5.1;
# the `UnpicklingError` on 2.6.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Not every `UnpicklingError` from `torch.load` on a new torch is the default flip. A "checkpoint"
# that is really a Git LFS pointer (a clone made without `git lfs pull`) is a small text file;
# from 2.6 on `torch.load` reports it as "Weights only load failed", with the same paragraph
# about the changed default, but the cause is `invalid load key`, and `weights_only=False`
# would fail just the same.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """2.6 on: the weights-only unpickler refuses the Namespace; 2.4-2.5: the warning that it
    will."""
    if run.raised(pickle.UnpicklingError, r"weights.only") and run.raised(
        pickle.UnpicklingError, r"argparse\.Namespace"
    ):
        return "UnpicklingError"
    if run.error is None and run.warned(FutureWarning, r"weights_only.*default"):
        return "FutureWarning"
    return False


def near_miss(device):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pt")
        with open(path, "w") as f:
            f.write(
                "version https://git-lfs.github.com/spec/v1\n"
                "oid sha256:0000000000000000000000000000000000000000000000000000000000000000\n"
                "size 1234\n"
            )
        return torch.load(path, map_location=device)


def check(run, device):
    """The resumed weight and learning rate are the ones written by hand, and the load neither
    raised nor warned."""
    assert run.error is None and run.value is not None, "the checkpoint did not load"
    torch.testing.assert_close(run.value["weight"], torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device))
    assert run.value["lr"] == 0.1
    assert not run.warnings, f"the load warned: {run.warnings[0].message}"


CASE = Case(
    id="torch-load-weights-only-default",
    title="A checkpoint that stores argparse arguments stops loading on 2.6",
    kind="error",
    symptom_category="error",
    symptom_line="A checkpoint holding argparse arguments stops loading on torch 2.6: Weights only load failed.",
    affects=(
        Affects(
            versions=">=2.4,<2.6",
            form="FutureWarning",
            reason="weights_only left out: FutureWarning that the default will flip, the load still "
            "succeeds (observed on 2.4.1 and 2.5.1)",
            issue="https://github.com/pytorch/pytorch/pull/129239",
        ),
        Affects(
            versions=">=2.6",
            form="UnpicklingError",
            reason="weights_only defaults to True and the restricted unpickler refuses "
            "argparse.Namespace (observed from 2.6.0 on)",
            issue="https://github.com/pytorch/pytorch/pull/137602",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.6.0").at("Backwards Incompatible Changes: torch.load defaults to weights_only=True"),),
    tags=("upgrade", "serialization", "torch_load", "weights_only"),
    references=(
        "https://github.com/pytorch/pytorch/pull/129239",  # FutureWarning when weights_only is left out (2.4)
        "https://github.com/pytorch/pytorch/pull/137602",  # the default flips to True (2.6)
        "https://dev-discuss.pytorch.org/t/bc-breaking-change-torch-load-is-being-flipped-to-use-weights-only-true-by-default-in-the-nightlies-after-137602/2573",
        "https://github.com/ROCm/Megatron-LM/pull/56",  # argparse.Namespace in checkpoints, broke on 2.6
        "https://github.com/chemprop/chemprop/issues/1227",  # checkpoints with args fail on 2.6
    ),
)
