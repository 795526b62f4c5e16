# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `@torch.cuda.amp.custom_fwd` is deprecated from 2.4
#
# A library ships a custom autograd function whose `forward` and `backward` are decorated with
# `@torch.cuda.amp.custom_fwd` and `@torch.cuda.amp.custom_bwd`, the documented way to make a
# `torch.autograd.Function` behave under autocast. After the upgrade to 2.4 every import, or
# every call that defines the class, prints two warnings,
# ``FutureWarning: `torch.cuda.amp.custom_fwd(args...)` is deprecated. Please use
# `torch.amp.custom_fwd(args..., device_type='cuda')` instead.`` and the same for
# `custom_bwd`. The decorators run when the class body is executed, so the warning appears even
# on a machine without a GPU, before anything runs on CUDA.

# %%
import functools

import torch

from torch_pitfalls import observe


def _round_ste(custom_fwd, custom_bwd):
    """A straight-through rounding function (round forward, identity backward), decorated the
    way autocast-aware custom functions are."""

    class RoundSTE(torch.autograd.Function):
        @staticmethod
        @custom_fwd
        def forward(ctx, x):
            return x.round()

        @staticmethod
        @custom_bwd
        def backward(ctx, grad):
            return grad

    return RoundSTE


def _run(function, device):
    x = torch.tensor([0.2, 1.7, -2.6, 3.5], device=device, requires_grad=True)
    y = function.apply(x)
    (y * torch.tensor([1.0, 2.0, 3.0, 4.0], device=device)).sum().backward()
    return y.detach(), x.grad


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    function = _round_ste(torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd)
    return _run(function, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `custom_fwd` makes a custom function's forward run with autocast's state recorded (and, with
# `cast_inputs=`, its inputs cast and autocast switched off inside); `custom_bwd` replays that
# state in backward. The mechanism is not specific to CUDA, so torch 2.4 moved it to
# `torch.amp.custom_fwd(..., device_type=...)` and `torch.amp.custom_bwd(..., device_type=...)`
# and turned the `torch.cuda.amp` names into wrappers that warn with `FutureWarning` and
# forward with `device_type="cuda"`. The function computes the same as before.
#
# ## The fix
# There is no single spelling for every release: `torch.amp.custom_fwd` only exists from 2.4,
# and before 2.4 `torch.cuda.amp.custom_fwd` is the only one. So the fix is the guard the
# libraries above wrote, on the presence of the new name: the new decorators with
# `device_type="cuda"` where they exist, the old ones before. It runs quietly from 1.13.1 to
# 2.15.0.


# %%
def fixed(device):
    if hasattr(torch.amp, "custom_fwd"):  # torch >= 2.4
        custom_fwd = functools.partial(torch.amp.custom_fwd, device_type="cuda")
        custom_bwd = functools.partial(torch.amp.custom_bwd, device_type="cuda")
    else:  # torch < 2.4: the CUDA names are the only ones, and they do not warn there
        custom_fwd, custom_bwd = torch.cuda.amp.custom_fwd, torch.cuda.amp.custom_bwd
    return _run(_round_ste(custom_fwd, custom_bwd), device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#126527 ("Deprecate device-specific GradScaler autocast API") and #126531
# ("generalize custom_fwd&custom_bwd to be device-agnostic"), both May 2024 and in 2.4, added
# `torch.amp.custom_fwd`/`custom_bwd` and made the `torch.cuda.amp` ones warn (the review of
# #126531 asked to drop `DeprecationWarning`, which Python hides by default, so that users see
# it). Downstream, Dao-AILab/flash-attention#1530 complains of "lots of spam" from these two
# decorators, NVIDIA/Megatron-LM#1222 replaced them behind a version check to keep older torch
# working, and fla-org/flash-linear-attention#54 did the same. Observed on the CPU with this case:
# quiet on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the `FutureWarning` on 2.4.1, 2.5.1, 2.6.0,
# 2.13.0 and 2.15.0 (the range is open above).

# %% [markdown]
# ## How the harness checks it
#
# The same pull request deprecated the CUDA `GradScaler`, with a warning of the same category
# and the same shape (`torch.cuda.amp.GradScaler(args...)` is deprecated). A training script
# often has both; the scaler's warning is about another line and another fix
# (`torch.amp.GradScaler("cuda", ...)`), not the decorators.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Decorating warns that `torch.cuda.amp.custom_fwd` (or `custom_bwd`) is deprecated."""
    return run.warned(FutureWarning, r"torch\.cuda\.amp\.custom_(fwd|bwd).*deprecated")


def near_miss(device):
    return torch.cuda.amp.GradScaler(enabled=False).is_enabled()


def check(run, device):
    """Forward rounds (values written by hand), backward passes the upstream gradient straight
    through, and defining the function emitted no warning."""
    y, grad = run.value
    torch.testing.assert_close(y, torch.tensor([0.0, 2.0, -3.0, 4.0], device=device))
    torch.testing.assert_close(grad, torch.tensor([1.0, 2.0, 3.0, 4.0], device=device))
    assert not run.warnings, f"defining the function warned: {run.warnings[0].message}"


CASE = Case(
    id="cuda-amp-custom-fwd-deprecated",
    title="@torch.cuda.amp.custom_fwd is deprecated from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="@torch.cuda.amp.custom_fwd prints a FutureWarning from torch 2.4.",
    affects=(
        Affects(
            versions=">=2.4",
            reason="decorating with torch.cuda.amp.custom_fwd/custom_bwd warns FutureWarning (observed "
            "from 2.4.1 on, on the CPU; quiet on 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/126531",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: torch.cuda.amp.custom_fwd / custom_bwd"),),
    tags=("upgrade", "amp", "autograd_function", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/126527",  # deprecates torch.cuda.amp.GradScaler/custom_fwd
        "https://github.com/pytorch/pytorch/pull/126531",  # torch.amp.custom_fwd/custom_bwd, device-agnostic
        "https://github.com/Dao-AILab/flash-attention/issues/1530",  # "lots of spam" from the decorators
        "https://github.com/NVIDIA/Megatron-LM/pull/1222",  # the version-guarded fix
        "https://github.com/fla-org/flash-linear-attention/pull/54",  # same guard in another library
    ),
)
