# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.get_autocast_gpu_dtype()` is deprecated from 2.4
#
# A hand-written kernel cannot take part in autocast by itself, so its Python wrapper asks which
# dtype autocast computes in and casts its inputs to it. For years the question was spelled
# `torch.get_autocast_gpu_dtype()`, and kernels such as mamba's selective scan still spell it
# so. From torch 2.4 on every call emits `DeprecationWarning: torch.get_autocast_gpu_dtype() is
# deprecated. Please use torch.get_autocast_dtype('cuda') instead.` once per call: in a forward
# pass, once per step. Python hides a `DeprecationWarning` raised in library code, so the
# script's own run looks quiet, and then pytest, which shows them, prints it on every test.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The wrapper's helper: the dtype the kernel's inputs are cast to when autocast is on. It reads
# CUDA's autocast setting, which exists (and is float16 by default) on a machine without a GPU
# too; `device` is where the kernel's inputs live.


# %%
def broken(device):
    dtype = torch.get_autocast_gpu_dtype()  # the spelling of torch 1.x kernels
    return torch.ones(2, device=device).to(dtype)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Autocast used to have one set of functions per device: `torch.get_autocast_gpu_dtype`,
# `torch.get_autocast_cpu_dtype`, `torch.set_autocast_gpu_dtype` and their `is_..._enabled`
# twins. pytorch/pytorch#124359 (2.4) made the device type an argument
# (`torch.get_autocast_dtype(device_type)`, and the same for `set_` and `is_autocast_enabled`),
# and the per-device getters became wrappers that warn with `TORCH_WARN_DEPRECATION`, which
# reaches Python as a `DeprecationWarning`, and return the new function's answer. The value is
# unchanged; only the spelling is old.
#
# ## The fix
# Ask `torch.get_autocast_dtype("cuda")`. It does not exist before 2.4, and a kernel that
# supports older releases cannot call it there, so test for it: where it is missing, the old
# getter is the only spelling and does not warn. The fixed helper below gives the same dtype
# quietly on every release from 1.13.1 to 2.15.0.


# %%
def cuda_autocast_dtype():
    if hasattr(torch, "get_autocast_dtype"):  # 2.4 on: one getter, the device type an argument
        return torch.get_autocast_dtype("cuda")
    return torch.get_autocast_gpu_dtype()  # before 2.4: the only spelling, and a quiet one


def fixed(device):
    dtype = cuda_autocast_dtype()
    return torch.ones(2, device=device).to(dtype)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#124359 ("generalize the autocast API to every device type") added
# `torch.get_autocast_dtype(device_type)` and its siblings in 2.4, and the per-device getters
# now warn in `torch/csrc/autograd/init.cpp`. Downstream, huggingface/transformers#42055
# replaced the call in its flash-attention integration to silence the warning, and
# huggingface/kernels-community#1052 lists the mamba-ssm call sites (`selective_scan_interface.py`,
# `layer_norm.py`, `ssd_combined.py`) that still print it under CUDA autocast. The 2.4 release
# notes list the device-agnostic autocast API among that release's changes.

# %% [markdown]
# ## How the harness checks it
#
# Its CPU twin, `torch.get_autocast_cpu_dtype()`, warns in the same words from the same
# release. It is another function with another answer (bfloat16, the CPU's autocast dtype) and
# another replacement (`torch.get_autocast_dtype("cpu")`); a wrapper that asks it is not asking
# about CUDA, so the symptom does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The call warns that torch.get_autocast_gpu_dtype() is deprecated."""
    return run.warned(DeprecationWarning, r"get_autocast_gpu_dtype\(\) is deprecated")


def near_miss(device):
    dtype = torch.get_autocast_cpu_dtype()  # the CPU's getter: same words, another function
    return torch.ones(2, device=device).to(dtype)


def check(run, device):
    """The inputs are cast to float16, CUDA autocast's default dtype (the amp docs'), and
    nothing warned."""
    assert run.error is None, f"raised {run.error!r}"
    torch.testing.assert_close(run.value, torch.ones(2, device=device, dtype=torch.float16))
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="autocast-gpu-dtype-deprecated",
    title="torch.get_autocast_gpu_dtype() is deprecated from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.get_autocast_gpu_dtype() emits a DeprecationWarning on every call, from 2.4.",
    affects=(
        Affects(
            versions=">=2.4",
            reason="torch.get_autocast_gpu_dtype() warns DeprecationWarning and points to torch.get_autocast_dtype('cuda')",
            issue="https://github.com/pytorch/pytorch/pull/124359",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#124359: generalize the autocast API to every device type",
            url="https://github.com/pytorch/pytorch/pull/124359",
        ),
        release_notes("2.4.0").at("device-agnostic autocast API"),
    ),
    tags=("upgrade", "amp", "autocast", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/124359",  # torch.get_autocast_dtype(device_type)
        "https://github.com/huggingface/transformers/pull/42055",  # the warning fixed downstream
        "https://github.com/huggingface/kernels-community/issues/1052",  # mamba-ssm's call sites
    ),
)
