# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.cuda.amp.autocast(...)` is deprecated from 2.4
#
# A training or inference step wraps its forward pass the way the AMP recipe showed it since
# 1.6: `with torch.cuda.amp.autocast(enabled=use_amp): out = model(x)`. After the upgrade to
# torch 2.4, each time the block is entered it prints ``FutureWarning:
# `torch.cuda.amp.autocast(args...)` is deprecated. Please use `torch.amp.autocast('cuda',
# args...)` instead.`` It warns with `enabled=False` and on a machine without a GPU, where the
# block does nothing at all, so CPU-only CI and debugging runs see it too; in a loop that is one
# warning per batch, and a suite that turns warnings into errors fails. The numbers do not
# change.

# %%
import torch
import torch.nn.functional as F

from torch_pitfalls import observe


def _inputs(device):
    """A linear layer's input, weight and bias, with values exact in float16."""
    x = torch.arange(12.0, device=device).reshape(3, 4) / 4
    w = torch.arange(8.0, device=device).reshape(2, 4) / 8 - 0.5
    b = torch.tensor([0.25, -0.25], device=device)
    return x, w, b


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    x, w, b = _inputs(device)
    use_amp = torch.device(device).type == "cuda"
    with torch.cuda.amp.autocast(enabled=use_amp):  # as in the AMP recipe
        return F.linear(x, w, b)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Autocast used to be spelled per device. Torch made `torch.autocast(device_type, ...)` (also
# reachable as `torch.amp.autocast`) the single API (pytorch/pytorch#125103); the CUDA class is a
# thin subclass that passes its arguments on as `torch.amp.autocast("cuda", ...)`, and in 2.4 its
# construction was marked deprecated with `FutureWarning` (#126062; in 2.4.1 the decorator sits
# on `__init__`, in 2.13.0 on the class). The warning is emitted when the object is built,
# whatever the arguments, so `enabled=False` and a CPU-only build warn as well.
#
# ## The fix
# `torch.autocast("cuda", enabled=use_amp)`. Unlike the GradScaler's replacement it needs no
# guard: `torch.autocast` came with 1.10 and takes the same arguments (float16 is the CUDA
# default in both), so the same line runs quietly on every release from 1.13.1 to 2.15.0.
# `torch.amp.autocast("cuda", ...)`, the spelling the warning suggests, is the same class. One
# thing to keep is `enabled=use_amp` on a machine without CUDA: an enabled CUDA autocast there
# warns with a `UserWarning` that CUDA is not available and autocast is disabled, in the old
# spelling and the new alike (observed on 2.2.2, 2.3.1, 2.4.1 and 2.13.0, worded differently on
# 2.13.0).


# %%
def fixed(device):
    x, w, b = _inputs(device)
    use_amp = torch.device(device).type == "cuda"
    with torch.autocast("cuda", enabled=use_amp):
        return F.linear(x, w, b)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#126062 ("[Doc] Add deprecated autocast comments for doc", in 2.4) made
# `torch.cuda.amp.autocast(...)` and `torch.cpu.amp.autocast(...)` warn, after #125103 generalised
# `torch.amp.autocast` to every device; the 2.4.0 release notes list both under Deprecations. The
# CUDA spelling is the one the AMP recipe taught, so downstream it is met far more often than the
# CPU one: pytorch/tutorials#3331 tracks the tutorials that still used it, huggingface/trl#1921
# proposes `torch.amp.autocast("cuda")` in its place, WenjieDu/PyPOTS#520 records the warning
# coming from the library's own Reformer attention module, and in lucidrains/x-transformers#265 a
# user reported it and the maintainer asked how far back the replacement works (to 1.10, for
# `torch.autocast`). Observed on the CPU with this case: quiet on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and
# 2.3.1; the `FutureWarning` on 2.4.1, 2.5.1, 2.6.0, 2.13.0 and 2.15.0 (the range is open above).

# %% [markdown]
# ## How the harness checks it
#
# The same release deprecated the other device-specific AMP spellings, with the same category
# and messages of the same shape: the CPU autocast (`torch.cpu.amp.autocast`, the case
# cpu-amp-autocast-deprecated) and the scaler that usually sits two lines below
# (`torch.cuda.amp.GradScaler`, cuda-amp-gradscaler-deprecated). A loop that uses both sees two
# `FutureWarning`s that are not this one, each with its own fix.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Entering the block warns that `torch.cuda.amp.autocast` is deprecated."""
    return run.warned(FutureWarning, r"torch\.cuda\.amp\.autocast.*deprecated")


def near_miss(device):
    x, w, b = _inputs(device)
    scaler = torch.cuda.amp.GradScaler(enabled=False)
    with torch.cpu.amp.autocast(enabled=False):
        return scaler.scale(F.linear(x, w, b))


def check(run, device):
    """On CUDA the result equals the linear layer computed by hand in float16 (autocast's CUDA
    dtype); on the CPU, where the block is disabled, it is the float32 layer; and entering the
    block emitted no warning."""
    x, w, b = _inputs(device)
    if torch.device(device).type == "cuda":
        expected = F.linear(x.half(), w.half(), b.half())
    else:
        expected = x @ w.T + b
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"autocast warned: {run.warnings[0].message}"


CASE = Case(
    id="cuda-amp-autocast-deprecated",
    title="torch.cuda.amp.autocast(...) is deprecated from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.cuda.amp.autocast(...) prints a FutureWarning from torch 2.4.",
    affects=(
        Affects(
            versions=">=2.4",
            reason="entering torch.cuda.amp.autocast warns FutureWarning, even disabled and without a GPU "
            "(observed from 2.4.1 on, on the CPU; quiet on 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/126062",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: torch.cpu.amp.autocast / torch.cuda.amp.autocast"),),
    tags=("upgrade", "amp", "autocast", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/126062",  # deprecates torch.cpu/cuda.amp.autocast
        "https://github.com/pytorch/tutorials/issues/3331",  # the tutorials still used the old spelling
        "https://github.com/huggingface/trl/pull/1921",  # the replacement in TRL
        "https://github.com/WenjieDu/PyPOTS/issues/520",  # the warning from a library's attention module
        "https://github.com/lucidrains/x-transformers/issues/265",  # "how far back does this work?"
    ),
)
