# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.load` without `weights_only` warns on 2.4 and 2.5
#
# A training script resumes from its own checkpoint, a dict of tensors, with
# `torch.load(path, map_location=device)`. After the upgrade to torch 2.4 every load prints a
# long `FutureWarning`: "You are using `torch.load` with `weights_only=False` (the current
# default value) ... In a future release, the default value for `weights_only` will be flipped
# to `True`". Nothing is wrong with the file, and the values are the same; the warning is about
# the argument that was left out. On 2.6 it is gone again, because the flip it announced
# happened, and for a checkpoint of plain tensors the new default loads the same thing.

# %%
import os
import tempfile
import warnings

import torch

from torch_pitfalls import observe


def _save_checkpoint(folder, device):
    """A resumable checkpoint of plain tensors: what `model.state_dict()` plus a step counter is."""
    path = os.path.join(folder, "checkpoint.pt")
    state = {
        "weight": torch.arange(6.0, device=device).reshape(2, 3),
        "bias": torch.tensor([0.5, -0.5], device=device),
        "step": torch.tensor(7, device=device),
    }
    torch.save(state, path)
    return path


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        return torch.load(path, map_location=device)  # weights_only left to its default


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.load` unpickles, and a pickle can name any importable function and call it while it
# loads: a downloaded checkpoint can run code. Since 1.13, `weights_only=True` loads through a
# restricted unpickler that only rebuilds tensors, storages and plain containers. In 2.4 torch
# started to warn whenever the argument was not passed (its default became `None`, meaning
# "warn, then behave as `False`"), announcing that the default would flip; 2.6 flipped it. A
# checkpoint of plain tensors is the case the flip was designed not to break: from 2.6 on the
# same call loads it with the safe unpickler, quietly. So the warning is an upgrade artefact of
# exactly two releases, and what it asks for is a decision: say which loader you mean.
#
# ## The fix
# Pass `weights_only=True` for checkpoints that hold tensors, numbers and plain containers.
# The argument exists since 1.13, so the call is the same on every release. One wart: on 2.0
# and 2.1 the weights-only unpickler itself built storages through the deprecated
# `TypedStorage` constructor and so emitted "TypedStorage is deprecated" (a `UserWarning`
# about torch's own internals, pytorch/pytorch#109108; observed here on 2.0.1 and 2.1.2, gone
# from 2.2.2). The fix silences exactly that message, around exactly that call, and nothing
# else; on every other release the filter has nothing to catch.


# %%
def fixed(device):
    with tempfile.TemporaryDirectory() as folder:
        path = _save_checkpoint(folder, device)
        with warnings.catch_warnings():  # restores the filters on the way out
            # torch 2.0/2.1 only: the weights-only unpickler warns about its own TypedStorage use
            warnings.filterwarnings("ignore", message="TypedStorage is deprecated", category=UserWarning)
            return torch.load(path, map_location=device, weights_only=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#129239 ("Add warning for weights_only", June 2024, in 2.4) changed the default
# of `weights_only` to `None` and added the `FutureWarning` for calls that leave it out; #137602
# ("Flip default on weights_only", in 2.6; listed among the 2.6.0 release notes' backwards
# incompatible changes) made `True` the default, which ends the warning. Downstream,
# Lightning-AI/pytorch-lightning#20057 set `weights_only` on every `torch.load` in its tests
# because its suite turns `FutureWarning` into failures, and Linesight-RL/linesight#50 is a user's
# log full of it. Observed on the CPU with this case: quiet on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and
# 2.3.1; the `FutureWarning` on 2.4.1 and 2.5.1; quiet again on 2.6.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Not every `torch.load` warning that names `weights_only` is this one. A checkpoint written
# with a pickle protocol other than torch's default (2), loaded with `weights_only=True`, gets a
# `UserWarning` from the weights-only unpickler (since 2.4) that the protocol might not be
# supported. The argument is set; the warning is about the file's protocol.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The load warns that weights_only was left at its (changing) default."""
    return run.warned(FutureWarning, r"weights_only.*default")


def near_miss(device):
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "checkpoint.pt")
        torch.save({"weight": torch.ones(2, device=device)}, path, pickle_protocol=3)
        return torch.load(path, map_location=device, weights_only=True)


def check(run, device):
    """The loaded tensors are the ones written by hand, on the requested device, and the load
    emitted no warning (the broken call loads the same values, so the warning tells it apart)."""
    value = run.value
    assert isinstance(value, dict), f"expected the checkpoint dict, got {type(value).__name__}"
    torch.testing.assert_close(value["weight"], torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device))
    torch.testing.assert_close(value["bias"], torch.tensor([0.5, -0.5], device=device))
    assert int(value["step"]) == 7
    assert value["weight"].device.type == torch.device(device).type
    assert not run.warnings, f"the load warned: {run.warnings[0].message}"


CASE = Case(
    id="torch-load-weights-only-warning",
    title="torch.load without weights_only warns on 2.4 and 2.5",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.load without weights_only prints a long FutureWarning on torch 2.4 and 2.5.",
    affects=(
        Affects(
            versions=">=2.4,<2.6",
            reason="torch.load warns FutureWarning when weights_only is not passed (observed on 2.4.1 "
            "and 2.5.1; absent on 2.3.1 and on 2.6.0, where the default became True)",
            issue="https://github.com/pytorch/pytorch/pull/129239",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.6.0").at("Backwards Incompatible Changes: torch.load defaults to weights_only=True"),),
    tags=("upgrade", "serialization", "torch_load", "weights_only"),
    references=(
        "https://github.com/pytorch/pytorch/pull/129239",  # adds the FutureWarning (2.4)
        "https://github.com/pytorch/pytorch/pull/137602",  # flips the default (2.6)
        "https://github.com/pytorch/pytorch/issues/109108",  # weights_only=True warned TypedStorage on 2.0/2.1
        "https://github.com/Lightning-AI/pytorch-lightning/pull/20057",  # sets weights_only for 2.4
        "https://github.com/Linesight-RL/linesight/issues/50",  # the warning in a user's log
    ),
)
