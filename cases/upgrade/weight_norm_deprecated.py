# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.nn.utils.weight_norm` is deprecated
#
# A temporal convolution network or a vocoder wraps its layers in
# `torch.nn.utils.weight_norm(layer)`. On 2.0 and before it runs silently. From 2.1 every
# wrapped layer warns `torch.nn.utils.weight_norm is deprecated in favor of
# torch.nn.utils.parametrizations.weight_norm`, once per layer at construction. From 2.4 the
# warning is a `FutureWarning` instead of a `UserWarning`, so a filter written for one lets
# the other through.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code

# %%
X = [[1.0, -2.0, 0.5, 3.0]]


def broken(device):
    with seeded(0):
        layer = nn.utils.weight_norm(nn.Linear(4, 3)).to(device)
    return layer(torch.tensor(X, device=device)).detach()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The old `weight_norm` replaces `weight` by two parameters, `weight_g` (magnitude) and
# `weight_v` (direction), and recomputes the weight in a forward pre-hook. That hook-based
# design breaks pickling and `deepcopy`. pytorch/pytorch#103001 reimplemented it on the
# parametrization API (`torch.nn.utils.parametrizations.weight_norm`), made the old function
# warn, and taught the new one to load `state_dict`s written by the old one. In 2.4 torch gave
# its deprecation warnings the `FutureWarning` category, this one included.
#
# ## The fix
# Use `torch.nn.utils.parametrizations.weight_norm`. It exists only from 2.1; on 1.13 and 2.0 the
# old function is the only one and is quiet, so code that supports both picks the new one when
# it is there. Two differences to know when porting: the parameters are now named
# `parametrizations.weight.original0` and `original1` (magnitude and direction) instead of
# `weight_g` and `weight_v`, and the weight is recomputed on every access rather than once per
# forward (wrap the forward in `torch.nn.utils.parametrize.cached()` to get the old behaviour).


# %%
def _weight_norm():
    new = getattr(nn.utils.parametrizations, "weight_norm", None)  # 2.1 and later
    return new if new is not None else nn.utils.weight_norm  # 1.13, 2.0: quiet there


def fixed(device):
    with seeded(0):
        layer = _weight_norm()(nn.Linear(4, 3)).to(device)
    return layer(torch.tensor(X, device=device)).detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#103001 ("Add parametrization version of weight_norm", June 2023) added
# `torch.nn.utils.parametrizations.weight_norm`, the deprecation warning and a migration guide in
# the docs; the 2.1.0 notes list the deprecation, and pytorch/pytorch#102999 collects complaints
# about the renamed parameters. Downstream: pytorch-tcn (paul-krug/pytorch-tcn#1) and EveryVoice
# (EveryVoiceTTS/EveryVoice#313) met the `UserWarning`, SpeechBrain the later `FutureWarning`
# (speechbrain/speechbrain#3074). Observed with this project's venvs: silent on 1.13.1 and 2.0.1,
# a `UserWarning` on 2.1.2, 2.2.2 and 2.3.1, a `FutureWarning` on 2.4.1, 2.6.0, 2.13.0 and 2.15.0
# (`python -m torch_pitfalls.surface diff` shows both changes). The old function had not been removed as
# of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# `torch.nn.utils.clip_grad_norm` without the trailing underscore is deprecated in the same
# module, with the same category on each release (`UserWarning`, then `FutureWarning` from
# 2.4): a deprecation of another function, not this one.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Wrapping the layer warned that nn.utils.weight_norm is deprecated; the category tells
    the release."""
    pattern = r"nn\.utils\.weight_norm`? is deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    with seeded(0):
        layer = nn.Linear(2, 1).to(device)
    layer(torch.ones(1, 2, device=device)).sum().backward()
    return nn.utils.clip_grad_norm(layer.parameters(), 1.0)


def check(run, device):
    """Weight normalisation starts from the layer's own weight (g = |w| per row, v = w), so the
    wrapped layer computes x @ W.T + b with the W and b a plain `nn.Linear(4, 3)` draws from seed
    0; the output is compared with that, worked out without any weight_norm, and nothing may
    have warned (the deprecated wrapper computes the same, so the warning tells them apart)."""
    with seeded(0):
        plain = nn.Linear(4, 3).to(device)
    x = torch.tensor(X, device=device)
    expected = (x @ plain.weight.T + plain.bias).detach()
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="weight-norm-deprecated",
    title="torch.nn.utils.weight_norm is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.nn.utils.weight_norm warns that it is deprecated, from torch 2.1.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="nn.utils.weight_norm warns with category=FutureWarning (observed 2.4.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/103001",
        ),
        Affects(
            versions=">=2.1,<2.4",
            form="UserWarning",
            reason="nn.utils.weight_norm warns with no category, a UserWarning (observed 2.1.2 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/103001",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.1.0").at(
            "Deprecations: torch.nn.utils.weight_norm, in favour of torch.nn.utils.parametrizations.weight_norm"
        ),
    ),
    tags=("upgrade", "weight_norm", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/103001",  # parametrization version + deprecation
        "https://github.com/pytorch/pytorch/issues/102999",  # the renamed parameters
        "https://github.com/paul-krug/pytorch-tcn/issues/1",  # downstream: pytorch-tcn
        "https://github.com/EveryVoiceTTS/EveryVoice/issues/313",  # downstream: EveryVoice TTS
        "https://github.com/speechbrain/speechbrain/issues/3074",  # downstream: the FutureWarning in SpeechBrain
    ),
)
