# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.backends.cuda.sdp_kernel()` is deprecated from 2.3
#
# An attention layer pins `F.scaled_dot_product_attention` to one backend, in the spelling of
# torch 2.0 to 2.2 (the "before" side of the 2.3 release notes' example): `with
# torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False):
# out = F.scaled_dot_product_attention(q, k, v)`, for reproducible numbers or to avoid a kernel
# that misbehaves on some GPU. From torch 2.3 on, every time the block is entered it emits a
# `FutureWarning`: `sdp_kernel()` is deprecated, will be removed, and
# `torch.nn.attention.sdpa_kernel()` is the new context manager "with updated signature". The
# attention is the same; the warning comes once per call, so once per layer and step, and it
# shows on a machine without a GPU too.

# %%
import math

import torch
import torch.nn.functional as F

from torch_pitfalls import observe


def _qkv(device):
    """Queries, keys and values of one head (batch 1, 2 heads, 3 positions, width 4)."""
    q = torch.arange(24.0, device=device).reshape(1, 2, 3, 4) / 24
    k = torch.arange(24.0, device=device).flip(0).reshape(1, 2, 3, 4) / 24
    v = torch.arange(24.0, device=device).reshape(1, 2, 3, 4) / 4 - 3
    return q, k, v


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    q, k, v = _qkv(device)
    # the math kernel only, in the 2.0-2.2 spelling
    with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False):
        return F.scaled_dot_product_attention(q, k, v)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `sdp_kernel` took one boolean per backend, so every new backend meant a new parameter (the
# cuDNN backend's `enable_cudnn`: absent on 2.2.2, present on 2.3.1). PR #114689 added the module
# `torch.nn.attention` with `sdpa_kernel(backends)`, which takes a list of `SDPBackend` members,
# and turned the old context manager into a wrapper that builds that list from its flags and
# warns with `FutureWarning`. The flags it sets are process-wide switches read when SDPA picks a
# kernel; both spellings set them and put them back on exit, and with only the math backend
# allowed the result is the textbook softmax(QKᵀ/√d)·V in either case.
#
# ## The fix
# `from torch.nn.attention import SDPBackend, sdpa_kernel` and `with sdpa_kernel(SDPBackend.MATH):`.
# The module arrived in the same release that deprecated the old spelling (observed: absent on
# 2.2.2, present on 2.3.1), so no single line is quiet on both sides of 2.3: the fix is the
# guard discussed in lucidrains/x-transformers#260: try the import, and fall back to
# `sdp_kernel` where it fails, which does not warn on those releases. On 1.13 there is no public
# `scaled_dot_product_attention` at all (its `sdp_kernel` has only `enable_flash` and
# `enable_math`), so the guard's outer branch writes the attention out, as nanoGPT-style models
# did. The fix is then quiet on every release from 1.13.1 to 2.15.0. It is also more exact: 2.3
# gave `sdp_kernel` a fourth flag, `enable_cudnn`, on by default, so the three-flag call above
# written for 2.0 leaves the cuDNN backend allowed as well on a GPU, while `sdpa_kernel` allows
# exactly the backends it is given.


# %%
def _attention_math_only(q, k, v):
    if not hasattr(F, "scaled_dot_product_attention"):  # torch < 2.0: no SDPA, the math by hand
        return torch.softmax(q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)), dim=-1) @ v
    try:
        from torch.nn.attention import SDPBackend, sdpa_kernel  # torch >= 2.3
    except ImportError:  # torch 2.0-2.2: the old context manager, which does not warn there
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_math=True, enable_mem_efficient=False):
            return F.scaled_dot_product_attention(q, k, v)
    with sdpa_kernel(SDPBackend.MATH):
        return F.scaled_dot_product_attention(q, k, v)


def fixed(device):
    q, k, v = _qkv(device)
    return _attention_math_only(q, k, v)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#114689 introduced `torch.nn.attention.sdpa_kernel` and deprecated
# `torch.backends.cuda.sdp_kernel`; the 2.3.0 release notes list it under Deprecations with the
# warning's text. Downstream, pytorch/torchchat#270 (April 2024, days before 2.3 came out)
# replaced the old context manager because the nightlies warned, lucidrains/x-transformers#260
# proposed the replacement and its maintainer asked whether it breaks older 2.x releases (it does:
# the import fails before 2.3, which is why the fix is guarded), meta-pytorch/torchfix#42 asked
# TorchFix for a rule, and meta-pytorch/gpt-fast#237 is a user asking how to migrate exactly the
# math-only block above. Observed on the CPU with this case: on 1.13.1 the broken code fails with
# `TypeError` (its `sdp_kernel` has no `enable_mem_efficient`); quiet on 2.0.1, 2.1.2 and 2.2.2;
# the `FutureWarning` on 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.13.0 and 2.15.0 (the range is open above:
# the context manager is still there in 2.15.0). The wording differs between 2.3.1 ("Please see,
# torch.nn.attention...") and 2.13.0 (the names in backquotes); the category is `FutureWarning`
# throughout.

# %% [markdown]
# ## How the harness checks it
#
# Attention code of the same years often sits inside `torch.cuda.amp.autocast(enabled=...)`,
# which from 2.4 warns with the same category that it is deprecated. It is another context
# manager with its own replacement (`torch.autocast("cuda", ...)`); the backend selection is
# not involved.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Entering the block warns that `torch.backends.cuda.sdp_kernel()` is deprecated."""
    return run.warned(FutureWarning, r"sdp_kernel\(\).*deprecated")


def near_miss(device):
    q, k, v = _qkv(device)
    with torch.cuda.amp.autocast(enabled=False):
        return F.scaled_dot_product_attention(q, k, v)


def check(run, device):
    """The output equals softmax(QKᵀ/√d)·V worked out in float64, and nothing warned."""
    q, k, v = (t.double() for t in _qkv(device))
    weights = torch.exp(q @ k.transpose(-2, -1) / 2.0)  # √d = 2 for width 4
    expected = (weights / weights.sum(-1, keepdim=True)) @ v
    torch.testing.assert_close(run.value.double(), expected, rtol=1e-5, atol=1e-5)
    assert not run.warnings, f"the attention warned: {run.warnings[0].message}"


CASE = Case(
    id="sdp-kernel-deprecated",
    title="torch.backends.cuda.sdp_kernel() is deprecated from 2.3",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.backends.cuda.sdp_kernel() warns that it is deprecated, from torch 2.3.",
    affects=(
        Affects(
            versions=">=2.3",
            reason="entering torch.backends.cuda.sdp_kernel(...) warns FutureWarning (observed from 2.3.1 on, "
            "on the CPU; quiet on 2.2.2)",
            issue="https://github.com/pytorch/pytorch/pull/114689",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.3.0").at("Deprecations: torch.backends.cuda.sdp_kernel, use torch.nn.attention.sdpa_kernel"),
    ),
    tags=("upgrade", "attention", "sdpa", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/114689",  # sdpa_kernel, and the deprecation of sdp_kernel
        "https://github.com/pytorch/torchchat/pull/270",  # torchchat drops the deprecated context manager
        "https://github.com/lucidrains/x-transformers/pull/260",  # "will this break for some versions of pytorch 2.x?"
        "https://github.com/meta-pytorch/torchfix/issues/42",  # a TorchFix rule asked for this warning
        "https://github.com/meta-pytorch/gpt-fast/issues/237",  # how to migrate the math-only block
    ),
)
