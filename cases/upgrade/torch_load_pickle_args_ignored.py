# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.load(..., encoding="latin1")` warns that pickle arguments need `weights_only=False`
#
# Code that loads checkpoints of any age passes `encoding="latin1"` to `torch.load`, the
# recipe the docs gave for files written by Python 2. On 1.13 that is quiet. After an upgrade
# to 2.11 every such load prints ``UserWarning: pickle_load_args only works if
# `weights_only=False`.``: since 2.6 `torch.load` defaults to the restricted weights-only
# unpickler, and from 2.11 it warns whenever extra pickle keyword arguments come along with
# it. The tensors load as before.

# %%
import os
import tempfile
import warnings

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pt")
        torch.save({"weight": torch.tensor([1.0, 2.0])}, path)
        state = torch.load(path, map_location=device, encoding="latin1")  # the Python 2 recipe
    return state["weight"]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.load` forwards extra keyword arguments (`encoding`, `errors`, ...) to the unpickler.
# Until 2.5 that was Python's `pickle` unless `weights_only=True` was asked for; 2.6 made the
# weights-only unpickler the default, and that unpickler takes `encoding` but no other pickle
# options (pytorch/pytorch#159555 shows `errors=` raising a `TypeError`). From 2.11 `torch.load`
# warns as soon as any such argument is combined with `weights_only=True`, whether or not the
# unpickler uses it, so the old `encoding="latin1"` recipe now warns on every load. (On 2.4 and
# 2.5 the same call printed another warning, the `FutureWarning` that the default of
# `weights_only` was about to change; that one belongs to a different case.)
#
# ## The fix
# A checkpoint written by Python 3, which is every checkpoint from torch 1.x on, needs no
# `encoding`: drop the argument and say `weights_only=True`, which is quiet on every release
# from 1.13. Only a genuine Python 2 pickle still needs `encoding`, and then it needs
# `weights_only=False` too, for a file from a trusted source. The check compares the loaded
# weight with the saved values.


# %%
def fixed(device):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "checkpoint.pt")
        torch.save({"weight": torch.tensor([1.0, 2.0])}, path)
        with warnings.catch_warnings():
            # torch 2.0 and 2.1's weights-only unpickler itself touches TypedStorage and warns
            # "TypedStorage is deprecated" once per process (observed in reports/torch-2.0.1-cpu.json
            # and torch-2.1.2-cpu.json; quiet from 2.2.2): torch's internals, not this code.
            warnings.filterwarnings("ignore", "TypedStorage is deprecated", UserWarning)
            state = torch.load(path, map_location=device, weights_only=True)
    return state["weight"]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# `python -m torch_pitfalls.surface diff` lists the warning as new in `serialization:load` between
# 2.10.0 and 2.11.0. It comes from pytorch/pytorch#161033 ("Fix `pickle_load_args` in
# `torch.load` when `weights_only=True`", opened in August 2025), which fixes
# pytorch/pytorch#159555, the report that the weights-only unpickler accepts none of the pickle
# options but `encoding` (`errors=` raised a `TypeError`). The PR's review settled the
# condition on `pickle_load_args != {}`, and that is the line the wheels ship: `if
# pickle_load_args != {} and weights_only:` followed by this warning, present in the 2.11.0 and
# 2.13.0 `torch/serialization.py` and absent from 2.10.0's. Its line in the 2.11.0 notes was
# not located. Downstream, boxmot's loader had to pin `weights_only=False` together with
# `encoding="latin1"` after the 2.6 default change (mikel-brostrom/boxmot#2123), which is the
# combination that stays quiet. No downstream issue
# about this warning itself was found. Observed with this project's venvs: quiet on 1.13.1,
# 2.6.0 and 2.10.0 (2.5.1 prints only the other `FutureWarning`), a `UserWarning` on 2.11.0,
# 2.12.1, 2.13.0, 2.14.1 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# `torch.save` has a `UserWarning` of its own on every release: saving a tensor that carries a
# backward hook warns that the hook will not be serialized. A serialization warning, about
# something else.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """torch.load's warning that extra pickle arguments need weights_only=False."""
    return run.warned(UserWarning, r"pickle_load_args only works if")


def near_miss(device):
    w = torch.tensor([1.0, 2.0], device=device, requires_grad=True)
    w.register_hook(lambda grad: grad * 2)
    with tempfile.TemporaryDirectory() as d:
        torch.save(w, os.path.join(d, "w.pt"))  # UserWarning: backward hook ... not be serialized
    return w.detach()


def check(run, device):
    """The weight saved as [1, 2] comes back as [1, 2], and nothing warned: the broken load
    returns the same tensor, so the missing warning is what tells the fix apart."""
    torch.testing.assert_close(run.value, torch.tensor([1.0, 2.0], device=device))
    assert not run.warnings, f"the load warned: {run.warnings[0].message}"


CASE = Case(
    id="torch-load-pickle-args-ignored",
    title="torch.load(..., encoding=) warns that pickle arguments need weights_only=False",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.load(..., encoding=) warns that pickle arguments need weights_only=False, from 2.11.",
    affects=(
        Affects(
            versions=">=2.11",
            reason="torch.load warns when pickle_load_args meet weights_only=True (observed 2.11.0 to "
            "2.15.0; quiet on 1.13.1, 2.6.0 and 2.10.0)",
            issue="https://github.com/pytorch/pytorch/pull/161033",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.11.0").at(
            "the release whose torch.load first warns about pickle_load_args under weights_only"
        ),
    ),
    tags=("upgrade", "serialization", "torch_load"),
    references=(
        "https://github.com/pytorch/pytorch/issues/159555",  # pickle_load_args vs the weights-only unpickler
        "https://github.com/pytorch/pytorch/pull/161033",  # the warning, fixing #159555 (first in 2.11)
        "https://github.com/mikel-brostrom/boxmot/pull/2123",  # downstream: torch.load with encoding latin1 after 2.6
    ),
)
