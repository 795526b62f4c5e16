# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.utils.checkpoint` without `use_reentrant` warns
#
# A model saves memory by recomputing a block in the backward pass:
# `y = checkpoint(block, x)`. On 1.13 and 2.0 this runs quietly. After an upgrade to 2.1 or
# later, every call prints a `UserWarning` that `use_reentrant` should be passed explicitly
# (the wording changes from release to release: "please pass in use_reentrant=True or
# use_reentrant=False explicitly", later "the use_reentrant parameter should be passed
# explicitly ... we will raise an exception"). The gradients are unchanged; a training log
# gets one warning per checkpointed call.

# %%
import warnings

import torch
from packaging.version import Version
from torch.utils.checkpoint import checkpoint

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def _input(device):
    return torch.linspace(-1.0, 1.0, 5, device=device).requires_grad_()


def broken(device):
    x = _input(device)
    y = checkpoint(torch.sin, x)  # no use_reentrant: the code as written before 2.1
    y.sum().backward()
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `checkpoint` has two implementations. The original, *reentrant* one runs the recomputation
# inside a nested backward call; it cannot handle `torch.autograd.grad`, inputs that do not
# require grad, or nested checkpoints. The newer, *non-reentrant* one is built on saved-tensor
# hooks and supports them. The default is still the reentrant one, and torch wants to switch
# it to `False`. Switching a default silently would change the behaviour of code that relies
# on the reentrant quirks, so 2.1 first made not choosing a deprecation: the call warns until
# the caller says which one it wants.
#
# ## The fix
# Pass `use_reentrant` explicitly; `False` is the recommended variant and exists since 1.11.
# One release needs a guard: in 2.4.x, `checkpoint` itself enters the deprecated
# `torch.cpu.amp.autocast`, so even a correct call emits a `FutureWarning` from inside torch
# (fixed in 2.5). The fix silences that one internal warning on 2.4 only, by message; the
# check proves the gradient is d/dx sin(x) = cos(x).


# %%
def fixed(device):
    x = _input(device)
    with warnings.catch_warnings():
        if Version(torch.__version__).release[:2] == (2, 4):
            # torch 2.4's checkpoint uses torch.cpu.amp.autocast internally, which 2.4 deprecated
            warnings.filterwarnings("ignore", message=r".*torch\.cpu\.amp\.autocast", category=FutureWarning)
        y = checkpoint(torch.sin, x, use_reentrant=False)
        y.sum().backward()
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#100551 ("torch.utils.checkpoint warns if user does not pass use_reentrant
# explicitly", May 2023) added the warning for 2.1, with a deprecation note: the default will
# become `False`, pass `True` to keep the old behaviour. #114158 gave `checkpoint_sequential`
# the same warning in 2.2. #116710 chose to keep a warning rather than raise, and #160534 /
# #160643 (2025) only rewrote the release the warning names; as of 2.15.0 the call still
# warns and does not raise. Downstream, training scripts print it on every step:
# bmaltais/kohya_ss#2481 reports it; bytedance/Protenix#108 and
# huggingface/pytorch-image-models#2394 fixed it by passing `use_reentrant=False`. The 2.4
# autocast warning from inside `checkpoint` was reported as meta-pytorch/torchtune#1730 and
# kohya-ss/sd-scripts#1649, and is gone in 2.5.
#
# Observed here on CPU: quiet on 1.13.1 and 2.0.1, the warning on 2.1.2, 2.2.2, 2.4.1, 2.6.0,
# 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Not every `UserWarning` from `checkpoint` is this one. Checkpointing a block whose inputs
# need no gradient (a frozen embedding's output, say) warns on every release that the
# gradients will be `None`: a real problem with the model, not with the call's spelling.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The call warns that use_reentrant should be passed explicitly (any wording)."""
    return run.warned(UserWarning, r"use_reentrant")


def near_miss(device):
    x = torch.linspace(-1.0, 1.0, 5, device=device)  # requires_grad is False
    return checkpoint(torch.sin, x, use_reentrant=True)  # UserWarning: None of the inputs have requires_grad=True


def check(run, device):
    """The gradient of sum(sin(x)) is cos(x), and the call emitted no warning (the broken call
    computes the same gradient, so its warning is what tells it apart)."""
    expected = torch.cos(torch.linspace(-1.0, 1.0, 5, device=device))
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="checkpoint-use-reentrant",
    title="torch.utils.checkpoint without use_reentrant warns",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.utils.checkpoint warns that use_reentrant should be passed, from torch 2.1.",
    affects=">=2.1",
    devices=("cpu", "cuda"),
    sources=(release_notes("2.1.0").at("Deprecations: not passing use_reentrant to torch.utils.checkpoint (#100551)"),),
    tags=("upgrade", "checkpoint", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/100551",  # the warning (2.1)
        "https://github.com/pytorch/pytorch/pull/116710",  # kept a warning rather than an error
        "https://github.com/pytorch/pytorch/issues/160534",  # the promised exception has not come
        "https://github.com/bmaltais/kohya_ss/issues/2481",  # downstream: the warning in a training GUI
        "https://github.com/bytedance/Protenix/pull/108",  # downstream fix: pass use_reentrant=False
        "https://github.com/meta-pytorch/torchtune/issues/1730",  # 2.4's own checkpoint warns (autocast)
    ),
)
