# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A padding mask built and never applied
#
# Sentences of different lengths are padded to a common length, an `attention_mask` marks the
# real tokens, and each sentence is encoded as the mean of its token embeddings. Encode one
# sentence alone and you get one vector; encode it in a batch next to a longer sentence and you
# get another, half as long. Nothing about the sentence changed, only the number of pad tokens
# after it. The mask was passed along with the batch, and the pooling never used it: the pads
# were averaged in.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A bag-of-embeddings encoder, `nn.Embedding` with `padding_idx=0`, so a pad's embedding is the
# zero vector. The sentence `[5, 17, 23]` is encoded alone (no padding) and as the first row of
# a batch whose second sentence has 6 tokens, so it gets 3 pads. The pooling is
# `embeddings.mean(dim=1)`.

# %%
PAD = 0
SENTENCE = [5, 17, 23]
LONGER = [8, 9, 10, 11, 12, 13]


def pad_batch(sentences, device):
    length = max(len(s) for s in sentences)
    ids = torch.tensor([s + [PAD] * (length - len(s)) for s in sentences], device=device)
    return ids, (ids != PAD).long()  # attention_mask: 1 for a real token, 0 for a pad


def encoder(device):
    with seeded(0):
        return nn.Embedding(50, 8, padding_idx=PAD).to(device)


def encode_alone_and_in_batch(device, pool, embed=None):
    if embed is None:
        embed = encoder(device)
    alone = pool(embed, *pad_batch([SENTENCE], device))[0]
    in_batch = pool(embed, *pad_batch([SENTENCE, LONGER], device))[0]
    return {"alone": alone.detach(), "in_batch": in_batch.detach(), "real": len(SENTENCE), "padded_to": len(LONGER)}


def mean_pool(embed, ids, attention_mask):
    return embed(ids).mean(dim=1)  # attention_mask is never read


def broken(device):
    return encode_alone_and_in_batch(device, mean_pool)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `mean(dim=1)` divides the sum over *all* positions by the padded length. The three real tokens
# contribute their embeddings, the three pads contribute zeros (or, without `padding_idx`, the
# pad token's learned embedding, which is worse), and the result is the sentence's true mean
# times 3/6. So a sentence's representation depends on the longest sentence it happens to be
# batched with: evaluation results change with the batch size and the sort order, and what the
# model learns about short sentences is diluted. The same happens to any pooling or attention
# that is not told where the padding is. With `nn.MultiheadAttention` and
# `nn.TransformerEncoder` the mask must be passed as `key_padding_mask` *and* with PyTorch's
# polarity: `True` means "ignore this position", the opposite of a Hugging Face
# `attention_mask`, where 1 means "keep". Passing `attention_mask.bool()` directly masks the
# real tokens and attends to the pads.
#
# ## The fix
# Apply the mask in the pooling: zero the pads (multiply by the mask) and divide by the number
# of real tokens, not by the padded length. For attention layers, pass
# `key_padding_mask=(attention_mask == 0)`. Then a sentence gets the same vector whatever it is
# batched with. The check compares both encodings with the mean of the sentence's three
# embedding rows, taken by hand from the table.


# %%
def masked_mean_pool(embed, ids, attention_mask):
    mask = attention_mask.unsqueeze(-1).to(torch.float32)
    return (embed(ids) * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def fixed(device):
    return encode_alone_and_in_batch(device, masked_mean_pool)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# torchtest2 lists "an attention mask that is ignored" among the bugs that do not crash, and its
# `input_dependency` check catches a mask that has no influence on the output; its bug gallery
# shows a text classifier that averages the padding in. In huggingface/sentence-transformers#230
# ("How mean pooling actually works?") the maintainer explains why their pooling multiplies by
# the mask before averaging: otherwise "Hello World PAD PAD" would get another embedding than
# "Hello World". huggingface/transformers#3560 asks how to average only the real tokens of
# `last_hidden_state`, and the `nn.MultiheadAttention` documentation states the polarity of
# `key_padding_mask` (a `True` entry is ignored). Nothing here depends on the torch release.

# %% [markdown]
# ## How the harness checks it
# Two encodings of one sentence can differ for another reason. An encoder with dropout left in
# training mode gives a different vector on every call, masked pooling or not (see
# `train-eval-mode`). The symptom asks for the dilution the pads leave behind, the batched
# vector equal to the lone one times `real / padded_to`, and does not claim random noise.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The sentence's vector in the batch differs from its vector alone, and equals it scaled by
    real tokens / padded length: the zero pads were averaged in."""
    if run.error is not None:
        return False
    v = run.value
    diluted = v["alone"] * v["real"] / v["padded_to"]
    return not torch.allclose(v["in_batch"], v["alone"]) and torch.allclose(v["in_batch"], diluted, atol=1e-6)


def near_miss(device):
    """Masked pooling, but dropout (p=0.5) after the embedding, in training mode."""
    embed = encoder(device)
    drop = nn.Dropout(0.5)

    def embed_with_dropout(ids):
        return drop(embed(ids))

    with seeded(1):
        return encode_alone_and_in_batch(device, masked_mean_pool, embed=embed_with_dropout)


def check(run, device):
    """Alone and in the batch, the sentence's vector is the mean of its three embedding rows,
    read from the table by hand."""
    assert run.error is None, f"raised {run.error!r}"
    table = encoder(device).weight.detach()
    by_hand = (table[SENTENCE[0]] + table[SENTENCE[1]] + table[SENTENCE[2]]) / 3
    torch.testing.assert_close(run.value["alone"], by_hand)
    torch.testing.assert_close(run.value["in_batch"], by_hand)


CASE = Case(
    id="attention-mask-ignored",
    title="A padding mask built and never applied",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A sentence's pooled embedding shrinks when it is batched with a longer one: the pads were averaged in.",
    # Mean pooling over the padded length is arithmetic; the padding_idx row has been zero since
    # the first releases. No release changes it.
    affects=(Affects("*", reason="a mean over padded positions counts the pads; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="torchtest2: 'an attention mask that is ignored' (the input_dependency check)",
            url="https://pypi.org/project/torchtest2/",
        ),
        Source(
            title="huggingface/sentence-transformers#230: How mean pooling actually works?",
            url="https://github.com/huggingface/sentence-transformers/issues/230",
        ),
        Source(
            title="huggingface/transformers#3560: Mean reduce over last hidden state",
            url="https://github.com/huggingface/transformers/issues/3560",
        ),
    ),
    tags=("shapes", "padding", "mask", "pooling", "attention"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.MultiheadAttention.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Embedding.html",
    ),
)
