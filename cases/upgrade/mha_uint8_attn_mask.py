# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A byte (`uint8`) `attn_mask` in `nn.MultiheadAttention` raises from 2.0
#
# A decoder builds its causal mask the way older code did, `torch.triu(torch.ones(n, n),
# diagonal=1).byte()`: 1 where a token must not look ahead. On 1.13 `nn.MultiheadAttention`
# accepts it, treats the 1s as "do not attend" and prints `UserWarning: Byte tensor for
# attn_mask in nn.MultiheadAttention is deprecated. Use bool tensor instead.` After the upgrade
# to 2.0 the same forward stops with `AssertionError: only bool and floating types of attn_mask
# are supported`. The mask did not change; a deprecated spelling of it stopped being accepted.

# %%
import math

import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One head over three tokens with a causal mask of bytes.

# %%
E = 4  # embedding size, one head


def _inputs(device):
    with seeded(0):
        mha = nn.MultiheadAttention(E, num_heads=1, batch_first=True).to(device)
        x = torch.randn(1, 3, E, device=device)
    return mha, x


def broken(device):
    mha, x = _inputs(device)
    causal = torch.triu(torch.ones(3, 3, device=device), diagonal=1).byte()  # 1 = do not attend
    out, weights = mha(x, x, x, attn_mask=causal)
    return out.detach(), weights.detach()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Attention masks come in two kinds: boolean (True = do not attend) and additive (a float added to
# the scores, `-inf` to block). Byte masks were the boolean kind from before torch had a bool dtype;
# pytorch/pytorch#33763 (1.6) accepted them beside bool masks with a deprecation warning. For 2.0,
# pytorch/pytorch#92733 rewrote the mask handling of `F.multi_head_attention_forward`: both masks
# are converted to one additive float mask before use, so that they can be handed to the fused
# attention kernels, and the conversion accepts only bool and floating masks. The byte mask,
# deprecated for eight releases (1.6 to 1.13), now fails the check. The padding mask had lost its
# byte spelling one release earlier: in 1.13.0 `nn.MultiheadAttention.forward` started to refuse a
# byte `key_padding_mask` (#86353, after #86120).
#
# ## The fix
# Build the mask as bool: `torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)`, or
# `.bool()` where a byte mask arrives from elsewhere. A bool mask means the same thing, works on
# every release from 1.13.1 to 2.15.0, and warns on none. The check recomputes the attention by
# hand from the module's own projection weights.


# %%
def fixed(device):
    mha, x = _inputs(device)
    causal = torch.triu(torch.ones(3, 3, dtype=torch.bool, device=device), diagonal=1)  # True = do not attend
    out, weights = mha(x, x, x, attn_mask=causal)
    return out.detach(), weights.detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# This case began as "a byte `key_padding_mask` raises where 1.13 warned". Run on the releases,
# that is not what happens: 1.13.1 already refuses a byte padding mask (the check came with
# pytorch/pytorch#86353, cherry-picked into 1.13 as #87106 after #86120), so nothing changes for
# it inside the matrix; Green-Wood/BTTR#17 is a user meeting that refusal. The byte *attention*
# mask is the one that changed at 2.0: pytorch/pytorch#33763 (1.6) accepted it with a deprecation
# warning, and pytorch/pytorch#92733 ("Regularize mask handling for attn_mask and
# key_padding_mask", January 2023, in 2.0) replaced the per-type code with a canonicalisation that
# accepts only bool and floating masks. Downstream, huggingface/transformers#21384 replaced its
# own uint8 masks with bool ones at the time; no user report of this exact error was found. The
# `mha-mismatched-mask-types` case is the other 2.0 change of the same PR: a float mask next to a
# bool one warns. Observed with this project's venvs on CPU: on 1.13.1 the byte mask works and
# warns (and the byte padding mask of the near miss is already refused); on 2.0.1, 2.13.0 and
# 2.15.0 the byte attention mask raises the `AssertionError`, and the bool mask of the fix is
# quiet and correct on all four (the 2.0.1 source has the new `_canonical_mask`, 1.13.1's still
# the byte-mask warning). The other releases are left to the version matrix.

# %% [markdown]
# ## How the harness checks it
#
# The same assertion guards the padding mask, and there it is older: a byte `key_padding_mask`
# has been refused since 1.13.0 (pytorch/pytorch#86353), so it fails on every release of the
# matrix, before and after this upgrade. The same module and exception, another mask, and no
# change at 2.0.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """2.0 on: the byte attn_mask is refused; 1.13: it works and warns that it is deprecated."""
    if run.raised(AssertionError, r"only bool and floating types of attn_mask"):
        return "AssertionError"
    if run.error is None and run.warned(
        UserWarning, r"Byte tensor for attn_mask in nn\.MultiheadAttention is deprecated"
    ):
        return "UserWarning"
    return False


def near_miss(device):
    mha, x = _inputs(device)
    padding = torch.tensor([[0, 0, 1]], dtype=torch.uint8, device=device)  # the third token is padding
    out, _ = mha(x, x, x, key_padding_mask=padding)  # AssertionError on 1.13.1 as on 2.x
    return out.detach()


def check(run, device):
    """The attention weights and output equal softmax(q k^T / sqrt(E) + causal) v, projected by
    the module's out_proj, computed by hand; and nothing warned (on 1.13 the byte mask gives the
    same numbers, so its warning is what tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    out, weights = run.value
    mha, x = _inputs(device)  # the same module and input, rebuilt from the same seed
    with torch.no_grad():
        wq, wk, wv = mha.in_proj_weight.chunk(3)
        bq, bk, bv = mha.in_proj_bias.chunk(3)
        q, k, v = x[0] @ wq.T + bq, x[0] @ wk.T + bk, x[0] @ wv.T + bv
        scores = q @ k.T / math.sqrt(E)
        ahead = torch.tensor([[False, True, True], [False, False, True], [False, False, False]], device=device)
        expected_weights = scores.masked_fill(ahead, float("-inf")).softmax(dim=-1)
        expected_out = expected_weights @ v @ mha.out_proj.weight.T + mha.out_proj.bias
    torch.testing.assert_close(weights[0], expected_weights)
    torch.testing.assert_close(out[0], expected_out)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="mha-uint8-attn-mask",
    title="A byte (uint8) attn_mask in nn.MultiheadAttention raises from 2.0",
    kind="error",
    symptom_category="error",
    symptom_line="A byte attn_mask in nn.MultiheadAttention raises from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            form="AssertionError",
            reason="the masks are canonicalised before use and a uint8 attn_mask is refused "
            "(observed from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/92733",
        ),
        Affects(
            versions=">=1.6,<2.0",
            form="UserWarning",
            reason="a uint8 attn_mask works as a bool one and warns that it is deprecated (observed on 1.13.1)",
            issue="https://github.com/pytorch/pytorch/pull/33763",
            since="pytorch/pytorch#33763 (April 2020) added bool and byte attn_mask support with this "
            "warning for byte masks: the 1.5.0 wheel's torch/nn/functional.py has no dtype check "
            "on attn_mask, the 1.6.0 one has the warning",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#92733: Regularize mask handling for attn_mask and key_padding_mask",
            url="https://github.com/pytorch/pytorch/pull/92733",
        ),
    ),
    tags=("upgrade", "attention", "mask", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/33763",  # 1.6: byte attn_mask accepted, with a deprecation warning
        "https://github.com/pytorch/pytorch/pull/92733",  # 2.0: masks canonicalised, byte masks refused
        "https://github.com/pytorch/pytorch/pull/86353",  # 1.13: the same refusal for key_padding_mask
        "https://github.com/pytorch/pytorch/issues/86120",  # what led to the key_padding_mask check
        "https://github.com/Green-Wood/BTTR/issues/17",  # downstream: the key_padding_mask sibling of this error
        "https://github.com/huggingface/transformers/pull/21384",  # downstream: uint8 masks replaced by bool
    ),
)
