# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A float `attn_mask` with a bool `key_padding_mask` warns in `nn.MultiheadAttention`
#
# A decoder builds its causal mask the way the old PyTorch transformer tutorial did, a float
# matrix of `0` and `-inf`, and its padding mask the natural way, `tokens == PAD`, a bool
# tensor. Both go into `nn.MultiheadAttention`. On 1.13 that ran quietly. After the upgrade to
# 2.0 every forward prints `UserWarning: Support for mismatched key_padding_mask and attn_mask
# is deprecated. Use same type for both instead.` The attention is the same; the two masks are
# expected to be of one kind.

# %%
import math

import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One head over three tokens, the last of which is padding.

# %%
E = 4  # embedding size, one head


def _inputs(device):
    with seeded(0):
        mha = nn.MultiheadAttention(E, num_heads=1, batch_first=True).to(device)
        x = torch.randn(1, 3, E, device=device)
    return mha, x


def _causal_float(n, device):
    """The tutorial's causal mask: 0 on and below the diagonal, -inf above."""
    return torch.triu(torch.full((n, n), float("-inf"), device=device), diagonal=1)


PAD = [[False, False, True]]  # the third token is padding


def broken(device):
    mha, x = _inputs(device)
    attn_mask = _causal_float(3, device)  # float
    key_padding_mask = torch.tensor(PAD, device=device)  # bool
    out, weights = mha(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
    return out.detach(), weights.detach()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `multi_head_attention_forward` accepted bool masks (True = do not attend), byte masks (the
# older spelling of the same) and float masks (added to the attention scores), and combined
# `attn_mask` and `key_padding_mask` with different code for each pair of types.
# pytorch/pytorch#92733 ("Regularize mask handling for attn_mask and key_padding_mask", in
# 2.0) converts both masks to one float form before adding them, so that the same masks can
# be passed to the new fused attention kernels, and deprecates passing one of each kind with
# this warning. The result is unchanged; the warning announces that the mixed form may stop
# being accepted.
#
# ## The fix
# Give both masks the same type, and on a code base that must also run on 1.13 make it bool:
# the causal mask as `torch.triu(torch.ones(n, n, dtype=torch.bool), diagonal=1)` (True = do not
# attend), the padding mask as it was. This runs without a warning on every release from
# 1.13.1 on. The other way round, a float padding mask of `0`/`-inf` next to the float causal
# mask, is quiet on 2.x but not portable: on 1.13.1 this project observed the float padding
# mask having no effect at all, the padded key kept its share of the attention. The check
# recomputes the attention by hand from the module's own projection weights.


# %%
def fixed(device):
    mha, x = _inputs(device)
    attn_mask = torch.triu(torch.ones(3, 3, dtype=torch.bool, device=device), diagonal=1)  # bool
    key_padding_mask = torch.tensor(PAD, device=device)  # bool too
    out, weights = mha(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask)
    return out.detach(), weights.detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#92733 (January 2023, released in 2.0) added the mismatch check and its
# warning in `torch.nn.functional`'s mask canonicalisation, together with the conversion of
# both masks to float; the 2.0.0 release notes do not list it among the deprecations (it
# appears in the version matrix's surface diff between 1.13.1 and 2.0.1 as a new `UserWarning`
# in `nn.functional._canonical_mask`). pytorch/pytorch#96103 reported that
# `nn.TransformerDecoder` triggered it internally. Downstream, the warning reached users of
# wfondrie/depthcharge (Noble-Lab/casanovo#174; fixed in wfondrie/depthcharge#30 by building
# the target mask as bool) and baudm/parseq#130 (PARSeq's permutation masks were float, its
# padding mask bool). Observed here on CPU: quiet on 1.13.1, the warning from 2.0.1 on
# (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1,
# 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and `reproduced` from 2.0.1
# on).

# %% [markdown]
# ## How the harness checks it
#
# Attention complains about its masks for other reasons too: a byte (`uint8`) padding mask was
# deprecated in favour of bool long before, and `nn.MultiheadAttention` has refused it with an
# `AssertionError` since 1.13.0 (observed on 1.13.1, 2.0.1, 2.13.0 and 2.15.0): same module,
# another complaint, and no warning at all. (A byte *attention* mask still warned on 1.13 and
# is refused from 2.0: the `mha-uint8-attn-mask` case.)

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The deprecation warning about the two masks having different types."""
    return run.warned(UserWarning, r"mismatched key_padding_mask and attn_mask is deprecated")


def near_miss(device):
    mha, x = _inputs(device)
    key_padding_mask = torch.tensor(PAD, device=device).to(torch.uint8)
    out, _ = mha(x, x, x, key_padding_mask=key_padding_mask)  # AssertionError from 1.13 on
    return out.detach()


def check(run, device):
    """The attention weights and output equal softmax(q k^T / sqrt(E) + causal + padding) v,
    projected by the module's own out_proj, computed by hand; and the call did not warn (the
    broken masks give the same numbers, so the warning is what tells them apart)."""
    assert run.error is None, f"raised {run.error!r}"
    out, weights = run.value
    mha, x = _inputs(device)  # the same module and input, rebuilt from the same seed
    with torch.no_grad():
        wq, wk, wv = mha.in_proj_weight.chunk(3)
        bq, bk, bv = mha.in_proj_bias.chunk(3)
        q, k, v = x[0] @ wq.T + bq, x[0] @ wk.T + bk, x[0] @ wv.T + bv
        scores = q @ k.T / math.sqrt(E)
        allowed = torch.tensor([[True, False, False], [True, True, False], [True, True, False]], device=device)
        scores = scores.masked_fill(~allowed, float("-inf"))  # causal, and key 2 is padding
        expected_weights = scores.softmax(dim=-1)
        expected_out = expected_weights @ v @ mha.out_proj.weight.T + mha.out_proj.bias
    torch.testing.assert_close(weights[0], expected_weights)
    torch.testing.assert_close(out[0], expected_out)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="mha-mismatched-mask-types",
    title="A float attn_mask with a bool key_padding_mask warns in nn.MultiheadAttention",
    kind="warning",
    symptom_category="warning",
    symptom_line="nn.MultiheadAttention warns about mismatched mask types, from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="F.multi_head_attention_forward warns when the two masks differ in type "
            "(observed: quiet on 1.13.1, UserWarning from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/92733",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#92733: Regularize mask handling for attn_mask and key_padding_mask",
            url="https://github.com/pytorch/pytorch/pull/92733",
        ),
        release_notes("2.0.0").at("not listed among the Deprecations; the warning ships in 2.0 with #92733"),
    ),
    tags=("upgrade", "attention", "mask", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/92733",  # masks regularised, mismatch deprecated
        "https://github.com/pytorch/pytorch/issues/96103",  # the warning from TransformerDecoder
        "https://github.com/wfondrie/depthcharge/pull/30",  # downstream: target mask made bool
        "https://github.com/baudm/parseq/issues/130",  # downstream: the warning in PARSeq training
    ),
)
