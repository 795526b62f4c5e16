# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.cpu.amp.autocast()` is deprecated from 2.4
#
# Mixed-precision inference on the CPU, written the way the 1.10 docs showed it:
# `with torch.cpu.amp.autocast(): out = model(x)`. The result is still computed in bfloat16,
# but from torch 2.4 on, every time the block is entered it prints
# ``FutureWarning: `torch.cpu.amp.autocast(args...)` is deprecated. Please use
# `torch.amp.autocast('cpu', args...)` instead.`` In an inference loop that is one warning per
# batch, and a test suite that turns warnings into errors fails.

# %%
import torch
import torch.nn.functional as F

from torch_pitfalls import observe


def _inputs(device):
    """A linear layer's input, weight and bias, with values exact in bfloat16."""
    x = torch.arange(12.0, device=device).reshape(3, 4) / 4
    w = torch.arange(8.0, device=device).reshape(2, 4) / 8 - 0.5
    b = torch.tensor([0.25, -0.25], device=device)
    return x, w, b


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    x, w, b = _inputs(device)
    with torch.cpu.amp.autocast():  # the CPU spelling from 1.10
        return F.linear(x, w, b)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Autocast used to have one context manager per device, `torch.cuda.amp.autocast` and
# `torch.cpu.amp.autocast`. Torch made the device-agnostic `torch.autocast(device_type, ...)`
# (also reachable as `torch.amp.autocast`) the one API (pytorch/pytorch#125103), and in 2.4
# the per-device classes became thin wrappers that warn with `FutureWarning` and forward to it
# (#126062). Nothing about the arithmetic changed: `F.linear` inside the block still runs in
# bfloat16 on the CPU.
#
# ## The fix
# `torch.autocast("cpu")`: it exists since 1.10 with the same defaults (bfloat16 on the CPU),
# so the same line runs quietly on every release from 1.13.1 to 2.15.0. The CPU autocast only
# acts on CPU tensors: with tensors on another device the block leaves them in float32, in the
# broken and the fixed spelling alike.


# %%
def fixed(device):
    x, w, b = _inputs(device)
    with torch.autocast("cpu"):
        return F.linear(x, w, b)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#126062 ("[Doc] Add deprecated autocast comments for doc", May 2024, in 2.4) made
# `torch.cpu.amp.autocast(...)` and `torch.cuda.amp.autocast(...)` warn, after #125103 generalised
# `torch.amp.autocast` to every device. Downstream, foundation-model-stack/fms-acceleration#107
# collected this warning among others to fix, and kohya-ss/sd-scripts#1649 is a log where the
# warning came from torch's own `torch/utils/checkpoint.py`, which still called
# `torch.cpu.amp.autocast` in the release that user ran. Observed on the CPU with this case: quiet
# on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the `FutureWarning` on 2.4.1, 2.5.1, 2.6.0, 2.13.0 and
# 2.15.0 (the range is open above).

# %% [markdown]
# ## How the harness checks it
#
# Its CUDA twin warns the same way with the same category, and a script that mixes both sees
# two deprecations that look alike. `torch.cuda.amp.autocast(enabled=False)` (a common way to
# switch mixed precision off) is the CUDA one: another API, another fix
# (`torch.amp.autocast('cuda', ...)`), not this case's.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Entering the block warns that `torch.cpu.amp.autocast` is deprecated."""
    return run.warned(FutureWarning, r"torch\.cpu\.amp\.autocast.*deprecated")


def near_miss(device):
    x, w, b = _inputs(device)
    with torch.cuda.amp.autocast(enabled=False):
        return F.linear(x, w, b)


def check(run, device):
    """On the CPU the result equals the linear layer computed by hand in bfloat16 (on another
    device, CPU autocast leaves float32 alone), and entering the block emitted no warning."""
    x, w, b = _inputs(device)
    if torch.device(device).type == "cpu":
        expected = F.linear(x.bfloat16(), w.bfloat16(), b.bfloat16())
    else:
        expected = F.linear(x, w, b)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"autocast warned: {run.warnings[0].message}"


CASE = Case(
    id="cpu-amp-autocast-deprecated",
    title="torch.cpu.amp.autocast() is deprecated from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.cpu.amp.autocast() prints a FutureWarning every time the block is entered, from 2.4.",
    affects=(
        Affects(
            versions=">=2.4",
            reason="entering torch.cpu.amp.autocast warns FutureWarning (observed from 2.4.1 on; quiet on 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/126062",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: torch.cpu.amp.autocast / torch.cuda.amp.autocast"),),
    tags=("upgrade", "amp", "autocast", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/125103",  # device-agnostic torch.amp.autocast
        "https://github.com/pytorch/pytorch/pull/126062",  # deprecates torch.cpu/cuda.amp.autocast
        "https://github.com/foundation-model-stack/fms-acceleration/issues/107",  # the warning downstream
        "https://github.com/kohya-ss/sd-scripts/issues/1649",  # torch's own checkpoint.py emitted it
    ),
)
