# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.nn.utils.stateless.functional_call` is deprecated
#
# A meta-learning loop (or a Gauss-Newton solver, or a hypernetwork) runs a module with
# parameters it supplies itself, through `torch.nn.utils.stateless.functional_call(model,
# params, (x,))`. On 1.13 it runs silently. From 2.0, every call warns that the API is
# deprecated and points to `torch.func.functional_call`; inside a training loop that is one
# warning per step. From 2.4 the warning is a `FutureWarning` instead of a `UserWarning`, so a
# filter written against the old category stops working.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code


# %%
def _model(device):
    with seeded(0):
        return nn.Linear(3, 2).to(device)


def _params(device):
    weight = torch.tensor([[1.0, 0.0, -1.0], [0.5, 2.0, 0.0]], device=device)
    bias = torch.tensor([0.25, -1.0], device=device)
    return {"weight": weight, "bias": bias}


def broken(device):
    from torch.nn.utils import stateless

    model = _model(device)
    x = torch.tensor([[1.0, 2.0, 3.0]], device=device)
    return stateless.functional_call(model, _params(device), (x,))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Two copies of the same idea existed: `torch.nn.utils.stateless.functional_call` in core and
# the functional API of functorch. When functorch moved into core as `torch.func` for 2.0,
# pytorch/pytorch#92280 kept one: `torch.func.functional_call`, a drop-in replacement, and
# the old entry point started warning. In 2.4, torch's deprecation warnings got the
# `FutureWarning` category, this one included.
#
# ## The fix
# Call `torch.func.functional_call`. `torch.func` does not exist on 1.13 (where the old call is
# quiet), so code that supports both imports the new name and falls back to the old one.


# %%
def fixed(device):
    try:
        from torch.func import functional_call  # 2.0 and later
    except ImportError:  # 1.13: torch.func does not exist, the stateless one does not warn
        from torch.nn.utils.stateless import functional_call

    model = _model(device)
    x = torch.tensor([[1.0, 2.0, 3.0]], device=device)
    return functional_call(model, _params(device), (x,))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#92280 ("Deprecate torch.nn.utils.stateless.functional_call", January 2023)
# added the warning and moved torch's own call sites to `torch.func.functional_call`; the 2.0.0
# notes list it among the deprecations. Downstream, torchimize switched to `torch.func` and
# kept a torch version check to stay compatible with older releases (hahnec/torchimize#7).
# Observed with this project's venvs: silent on 1.13.1, a `UserWarning` on 2.0.1, 2.1.2, 2.2.2
# and 2.3.1, a `FutureWarning` on 2.4.1, 2.6.0, 2.13.0 and 2.15.0 (`python -m torch_pitfalls.surface
# diff` shows the new wording and category between 2.3.1 and 2.4.1). The API had not been
# removed as of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Its sibling from functorch, `functorch.make_functional`, is deprecated in the same release
# with the same recommendation (`torch.func.functional_call`) and the same category change at
# 2.4, but it is another API: the symptom names the stateless one.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The call warned that stateless.functional_call is deprecated; the category tells the
    release. 2.0 to 2.3 word it 'This API is deprecated as of PyTorch 2.0', 2.4 on name it."""
    pattern = r"stateless\.functional_call`? is deprecated|^This API is deprecated as of PyTorch 2\.0"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    import functorch

    model = _model(device)
    return functorch.make_functional(model)  # deprecated too: "functorch.make_functional is deprecated"


def check(run, device):
    """The module ran with the supplied parameters: x @ W.T + b worked out by hand, not the
    module's own random weights, and nothing warned (the broken call computes the same, so the
    missing deprecation warning tells the fix apart)."""
    # [1, 2, 3] . [1, 0, -1] + 0.25 = -1.75 ; [1, 2, 3] . [0.5, 2, 0] - 1 = 3.5
    expected = torch.tensor([[-1.75, 3.5]], device=device)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="stateless-functional-call",
    title="torch.nn.utils.stateless.functional_call is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.nn.utils.stateless.functional_call warns to use torch.func, from 2.0.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="stateless.functional_call warns with category=FutureWarning (observed 2.4.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/92280",
        ),
        Affects(
            versions=">=2.0,<2.4",
            form="UserWarning",
            reason="stateless.functional_call warns with a UserWarning (observed 2.0.1 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/92280",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Deprecations: torch.nn.utils.stateless.functional_call in favour of torch.func.functional_call"
        ),
    ),
    tags=("upgrade", "functional_call", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/92280",  # the deprecation
        "https://github.com/hahnec/torchimize/pull/7",  # downstream: switched to torch.func with a version check
    ),
)
