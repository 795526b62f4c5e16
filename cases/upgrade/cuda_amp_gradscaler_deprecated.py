# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.cuda.amp.GradScaler(...)` is deprecated from 2.4
#
# A training script creates its loss scaler the way the AMP recipe showed it,
# `scaler = torch.cuda.amp.GradScaler(enabled=use_amp)`, and runs every step through
# `scaler.scale(loss).backward(); scaler.step(optimizer); scaler.update()`. After the upgrade to
# 2.4 the scaler's construction prints ``FutureWarning: `torch.cuda.amp.GradScaler(args...)` is
# deprecated. Please use `torch.amp.GradScaler('cuda', args...)` instead.`` It warns even with
# `enabled=False` on a machine without a GPU, where the scaler does nothing at all, so CPU-only
# CI and debugging runs see it too. Training is unchanged.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded


def _data(device):
    x = torch.tensor([[1.0, 0.0, 2.0], [0.0, 1.0, -1.0], [1.0, 1.0, 1.0], [2.0, -1.0, 0.0]], device=device)
    y = torch.tensor([[1.0], [0.0], [2.0], [-1.0]], device=device)
    return x, y


def _train_step(scaler, device):
    """One AMP-style step of a linear regression: scale, backward, step, update."""
    with seeded(0):
        model = nn.Linear(3, 1).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
    x, y = _data(device)
    loss = F.mse_loss(model(x), y)
    scaler.scale(loss).backward()
    scaler.step(optimizer)
    scaler.update()
    return model.weight.detach().clone(), model.bias.detach().clone()


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    use_amp = torch.device(device).type == "cuda"
    scaler = torch.cuda.amp.GradScaler(enabled=use_amp)  # as in the AMP recipe
    return _train_step(scaler, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Gradient scaling is not specific to CUDA, so torch gave it one device-agnostic class,
# `torch.amp.GradScaler(device, ...)` (also exported as `torch.GradScaler`), and in 2.4 turned
# `torch.cuda.amp.GradScaler(...)` into a subclass that warns with `FutureWarning` and forwards
# to `torch.amp.GradScaler("cuda", ...)`. The scaler behaves as before: disabled, it passes the
# loss and the optimizer step through untouched.
#
# ## The fix
# `torch.amp.GradScaler("cuda", enabled=...)`. It only exists from 2.3 on (observed: absent on
# 2.2.2, present on 2.3.1), so there is no single spelling for 1.13 to 2.15: the fix is the guard
# on the new name, which is quiet on every release from 1.13.1 to 2.15.0 (the old name does not
# warn before 2.4).


# %%
def fixed(device):
    use_amp = torch.device(device).type == "cuda"
    if hasattr(torch.amp, "GradScaler"):  # torch >= 2.3
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
    else:  # torch < 2.3: the CUDA class is the only one, and it does not warn there
        scaler = torch.cuda.amp.GradScaler(enabled=use_amp)
    return _train_step(scaler, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#126527 ("Deprecate device-specific GradScaler autocast API", May 2024, in 2.4)
# states that `torch.cuda.amp.GradScaler(args...)` is equivalent to `torch.amp.GradScaler("cuda",
# args...)` and deprecates the former; the same PR stack deprecated `torch.cuda.amp.custom_fwd`.
# Downstream, karpathy/nanoGPT#635 shows the warning coming from `scaler =
# torch.cuda.amp.GradScaler(enabled=(dtype == 'float16'))` in `train.py`,
# Linesight-RL/linesight#51 asked to replace the deprecated scaler, and MIC-DKFZ/nnUNet#2684
# switched to `torch.GradScaler("cuda")`. Observed on the CPU with this case: quiet on 1.13.1,
# 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the `FutureWarning` on 2.4.1, 2.5.1, 2.6.0, 2.13.0 and 2.15.0
# (the range is open above).

# %% [markdown]
# ## How the harness checks it
#
# The line next to the scaler in the same loop, `with torch.cuda.amp.autocast(enabled=...)`,
# was deprecated in the same release with the same category and a message of the same shape.
# It is another API with its own fix (`torch.autocast("cuda", ...)`), not the scaler.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Constructing the scaler warns that `torch.cuda.amp.GradScaler` is deprecated."""
    return run.warned(FutureWarning, r"torch\.cuda\.amp\.GradScaler.*deprecated")


def near_miss(device):
    x, _ = _data(device)
    with torch.cuda.amp.autocast(enabled=False):
        return x.sum()


def check(run, device):
    """The step equals plain SGD on the mean squared error, with the gradient worked out by hand
    (2/N * X^T (Xw + b - y)); the scaler (a power of two when enabled) changes nothing, and its
    construction emitted no warning."""
    weight, bias = run.value
    with seeded(0):
        start = nn.Linear(3, 1).to(device)
    w0, b0 = start.weight.detach(), start.bias.detach()
    x, y = _data(device)
    residual = x @ w0.T + b0 - y  # (4, 1)
    grad_w = 2.0 / len(x) * (residual.T @ x)
    grad_b = 2.0 / len(x) * residual.sum(0)
    torch.testing.assert_close(weight, w0 - 0.1 * grad_w)
    torch.testing.assert_close(bias, b0 - 0.1 * grad_b)
    assert not run.warnings, f"the scaler warned: {run.warnings[0].message}"


CASE = Case(
    id="cuda-amp-gradscaler-deprecated",
    title="torch.cuda.amp.GradScaler(...) is deprecated from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.cuda.amp.GradScaler(...) prints a FutureWarning from torch 2.4.",
    affects=(
        Affects(
            versions=">=2.4",
            reason="constructing torch.cuda.amp.GradScaler warns FutureWarning, even with enabled=False "
            "(observed from 2.4.1 on, on the CPU; quiet on 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/126527",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: torch.cuda.amp.GradScaler / torch.cpu.amp.GradScaler"),),
    tags=("upgrade", "amp", "grad_scaler", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/126527",  # deprecates the device-specific GradScaler
        "https://github.com/karpathy/nanoGPT/issues/635",  # the warning from train.py's scaler line
        "https://github.com/Linesight-RL/linesight/issues/51",  # replace the deprecated scaler
        "https://github.com/MIC-DKFZ/nnUNet/pull/2684",  # the fix in nnU-Net
    ),
)
