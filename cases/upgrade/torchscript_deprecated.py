# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.jit.script` is deprecated: a `DeprecationWarning`, then a `FutureWarning`
#
# A library scripts a small helper at import time, `fn = torch.jit.script(helper)`, as
# PyTorch's tutorials taught for years. On 1.13 to 2.9 that is silent. From 2.10 every call
# of `torch.jit.script` (and `trace`, `save`, `load`, ...) warns `` `torch.jit.script` is
# deprecated. Please switch to `torch.compile` or `torch.export`. `` as a `DeprecationWarning`:
# hidden in a plain script, but shown (or turned into an error) by pytest, which is how test
# suites downstream met it. From 2.14 the same message is a `FutureWarning`, which Python
# shows to everyone by default. The scripted function still computes the same result.

# %%
import torch
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def scale_shift(x: torch.Tensor, scale: float) -> torch.Tensor:
    return x * scale + 1.0


def broken(device):
    fn = torch.jit.script(scale_shift)
    return fn(torch.tensor([1.0, 2.0], device=device), 3.0)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# TorchScript has been in maintenance mode since torch.compile (2.0) and torch.export (2.1)
# took over its two jobs, speeding up Python models and exporting them without Python. In
# 2.10 its public entry points started to say so with a `DeprecationWarning`. Python hides that
# category unless the code that triggers it is in `__main__` or a test runner turns it on, so
# most users never saw it; pytorch/pytorch#189914 switched the category to `FutureWarning`,
# first released in 2.14, precisely to make it visible. pytorch/pytorch#189705 proposes the next
# step, turning the calls into errors.
#
# ## The fix
# There is no TorchScript spelling that stays quiet: the fix is to stop scripting. A helper
# scripted for speed is simply called as Python (or, on torch >= 2.0, wrapped in
# `torch.compile`, which needs a compiler toolchain and is not shown here); a model scripted to
# be saved is saved as a `state_dict`, or exported with `torch.export` from 2.1 on. The check
# compares the eager result with the values computed by hand.


# %%
def fixed(device):
    return scale_shift(torch.tensor([1.0, 2.0], device=device), 3.0)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# `python -m torch_pitfalls.surface diff` lists the new `DeprecationWarning`s in `jit._script`,
# `jit._trace` and `jit._serialization` between 2.9.1 and 2.10.0, with a second message for
# Python 3.14 ("not supported in Python 3.14+ and may break"); this project did not locate the
# upstream PR that added them. pytorch/pytorch#189914 ("Keep TorchScript out of import paths
# and make its deprecation warnings visible", July 2026) changed the category to
# `FutureWarning`. Downstream, PyG's test suite fails on the warning where it scripts
# `SelectOutput` (pyg-team/pytorch_geometric#10697), lance's test collection errors on it
# (lance-format/lance#5762), and TRL's CI traced it to DeepSpeed's import-time scripting
# (huggingface/trl#5021). Observed with this project's venvs: silent on 1.13.1 and 2.9.1, a
# `DeprecationWarning` on 2.10.0, 2.11.0, 2.12.1 and 2.13.0, a `FutureWarning` on 2.14.1 and
# 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Other old spellings are deprecated with a `FutureWarning` too, for example the initialiser
# `nn.init.xavier_uniform` without its trailing underscore (from 2.4): the same category and
# the same word, about another API.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, seeded
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The deprecation of torch.jit.script; the category tells which release it is."""
    pattern = r"torch\.jit\.script`? is deprecated"
    return run.warned_as(pattern, FutureWarning, DeprecationWarning)


def near_miss(device):
    w = torch.empty(2, 3, device=device)
    with seeded(0):
        nn.init.xavier_uniform(w)  # FutureWarning: ... is now deprecated
    return w


def check(run, device):
    """[1, 2] * 3 + 1 = [4, 7], and nothing warned: the scripted function computes the same
    numbers, so the missing warning is what tells the fix apart."""
    torch.testing.assert_close(run.value, torch.tensor([4.0, 7.0], device=device))
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="torchscript-deprecated",
    title="torch.jit.script is deprecated: a DeprecationWarning, then a FutureWarning",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.jit.script warns that it is deprecated, from torch 2.10.",
    affects=(
        Affects(
            versions=">=2.14",
            form="FutureWarning",
            reason="the TorchScript entry points warn with FutureWarning (observed 2.14.1 and 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/189914",
        ),
        Affects(
            versions=">=2.10,<2.14",
            form="DeprecationWarning",
            reason="the TorchScript entry points warn with DeprecationWarning (observed 2.10.0 to "
            "2.13.0; silent on 2.9.1)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.10.0").at(
            "the release whose torch.jit entry points first warn that TorchScript is deprecated"
        ),
    ),
    tags=("upgrade", "torchscript", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/189914",  # DeprecationWarning -> FutureWarning
        "https://github.com/pytorch/pytorch/pull/189705",  # proposal: make the warnings errors
        "https://github.com/pyg-team/pytorch_geometric/issues/10697",  # downstream: PyG's tests fail on it
        "https://github.com/lance-format/lance/issues/5762",  # downstream: lance's test collection errors
        "https://github.com/huggingface/trl/issues/5021",  # downstream: TRL's CI, via DeepSpeed
    ),
)
