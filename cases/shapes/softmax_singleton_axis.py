# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Softmax over an axis of size 1
#
# A spatial-attention block (CBAM-style) pools the channels of a feature map down to one map of
# logits and applies a softmax to weight the positions. Shapes all line up and nothing warns, but
# the "attention" is exactly 1.0 at every position, for every input, and the convolution that
# produces the logits never receives a gradient: the branch is switched off.

# %%
import torch
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Feature maps in PyTorch's N×C×H×W layout. Mean and max over the channels, a 3×3 convolution
# down to one channel of logits (N×1×H×W), then the softmax over the channel axis: `dim=1` is
# where TensorFlow's `tf.nn.softmax(conv)` (default `axis=-1`, the channels of an N×H×W×C
# tensor) lands when the code is ported. Every tensor comes from a local generator.


# %%
def attention_logits(device):
    gen = torch.Generator(device=device).manual_seed(0)
    features = torch.randn(2, 8, 4, 4, generator=gen, device=device)
    weight = torch.randn(1, 2, 3, 3, generator=gen, device=device, requires_grad=True)
    avg, top = features.mean(dim=1, keepdim=True), features.amax(dim=1, keepdim=True)
    pooled = torch.cat([avg, top], dim=1)  # N x 2 x H x W
    return features, weight, F.conv2d(pooled, weight, padding=1)  # logits: N x 1 x H x W


def broken(device):
    features, weight, logits = attention_logits(device)
    attention = F.softmax(logits, dim=1)  # over the channel axis, which has size 1
    (attention * features).sum().backward()
    return logits.detach(), attention, weight.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A softmax normalises each slice along `dim` to sum to 1. Along an axis of size 1 each slice
# has one element, so the result is `exp(x) / exp(x) = 1` whatever `x` is. Its derivative is 0
# too: the softmax Jacobian is `diag(s) - s s^T`, which is `1 - 1 = 0` for one element, so
# nothing flows back to the logits or to the convolution's weights. The map multiplies the
# features by 1 (harmless in the forward, which is why it goes unnoticed) and the branch never
# learns. The shape cannot warn you: N×1×H×W in, N×1×H×W out.
#
# Leaving `dim` out does not help. `F.softmax(x)` without `dim` is deprecated and warns, and then
# picks a dimension by the number of dimensions (a rule inherited from Lua Torch): 0 for 1-D and
# 3-D input, 1 for 2-D and 4-D. On this N×1×H×W tensor that is `dim=1` again: all ones, plus a
# `UserWarning`.

# %%
if __name__ == "__main__":
    _, _, logits = attention_logits("cpu")
    implicit = observe(F.softmax, logits.detach())  # no dim
    print(implicit.warned(UserWarning, "Implicit dimension"))  # True: deprecated
    print(bool((implicit.value == 1).all()))  # True: it picked dim=1 on this 4-D input

# %% [markdown]
# ## The fix
# Attention over positions means a softmax over the H×W positions of each map: flatten the
# spatial dims, take the softmax over them, and put the shape back, as the source post did with
# a reshape. Each map now sums to 1 over its positions. The result is checked against
# `exp(x) / sum exp(x)` over H and W written out by hand, and the convolution gets a gradient.


# %%
def spatial_softmax(logits):
    n, c, h, w = logits.shape
    return F.softmax(logits.reshape(n, c, h * w), dim=-1).reshape(n, c, h, w)


def fixed(device):
    features, weight, logits = attention_logits(device)
    attention = spatial_softmax(logits)
    (attention * features).sum().backward()
    return logits.detach(), attention.detach(), weight.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S3, 2019) debugged a TensorFlow PeleeNet detector whose AP fell to a tenth
# after a round of architecture changes, among them CBAM attention and an FPN. Its
# `spatial_attention` reduced the channels to one map, convolved it, and returned
# `tf.nn.softmax(conv)`: TensorFlow's softmax defaults to the last axis, the channels in
# N×H×W×C, which the reduction had just made size 1. The author reshaped to N×(H·W), took the
# softmax, and reshaped back. The post also observed that fixing
# this alone did not bring the AP back: an all-ones map multiplies by 1, so it disabled the
# branch rather than breaking the network (the real culprit was the normalisation, see
# `l2-normalize-all-dims`). The CBAM paper itself gates positions with an element-wise sigmoid,
# which has no axis to get wrong; a softmax needs the axis that holds the positions.
#
# In PyTorch, pytorch/pytorch#1020 (2017) described the implicit-dimension rule above and
# pytorch/pytorch#1763 asked for an explicit `dim` "like TensorFlow"; `F.softmax` got `dim` and
# the deprecation warning for omitting it in the 0.3 release (downstream projects fixed that
# warning on 0.3.0, e.g. OpenNMT/OpenNMT-py#487), and it still warns on 2.13.0.
# pytorch/pytorch#84524 (open) asks for `nn.Softmax()` without `dim` to be refused too.

# %% [markdown]
# ## How the harness checks it
#
# A switched-off attention branch has another cause: a sigmoid gate whose logits have grown
# large (a big bias, or weights that blew up) saturates at exactly 1.0 in float32 and passes no
# gradient either. But that happens only where the logits are large and positive.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S3


def symptom(run):
    """The attention is exactly 1 everywhere, even where the logit is negative (no squashing
    function gives 1 there), and the conv producing it gets an all-zero gradient."""
    if run.error is not None:
        return False
    logits, attention, weight_grad = run.value
    all_ones = torch.allclose(attention, torch.ones_like(attention))
    ones_at_negative_logits = bool((logits < 0).any())
    no_gradient = weight_grad is not None and torch.allclose(weight_grad, torch.zeros_like(weight_grad), atol=1e-7)
    return all_ones and ones_at_negative_logits and no_gradient


def near_miss(device):
    features, weight, logits = attention_logits(device)
    logits = logits + 50.0  # a saturating bias
    attention = torch.sigmoid(logits)
    (attention * features).sum().backward()
    return logits.detach(), attention, weight.grad


def check(run, device):
    """The attention is exp(x) / sum exp(x) over H and W written out by hand, each map sums to 1,
    and the convolution gets a gradient."""
    logits, attention, weight_grad = run.value
    by_hand = logits.exp() / logits.exp().sum(dim=(2, 3), keepdim=True)
    torch.testing.assert_close(attention, by_hand)
    torch.testing.assert_close(attention.sum(dim=(2, 3)), torch.ones(2, 1, device=device))
    assert weight_grad.abs().sum() > 0


CASE = Case(
    id="softmax-singleton-axis",
    title="Softmax over an axis of size 1",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A spatial attention map is exactly 1.0 everywhere, whatever the input.",
    star=True,  # a pitfall the source posts single out
    # Arithmetic, not an API behaviour: a softmax over one element is exp(x)/exp(x) = 1 and its
    # derivative is 0. From 1.13.1 on the matrix observes it; the broken code passes `dim`, which
    # F.softmax takes (and warns without) since 0.3. No release is known to have changed either.
    affects=(
        Affects(
            ">=0.3",
            since="F.softmax takes dim from 0.3.0 on (downstream projects met its "
            "implicit-dim warning on 0.3.0, e.g. OpenNMT/OpenNMT-py#487)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S3.at("section 2.3.1 'softmax': spatial_attention applies tf.nn.softmax after reducing the channels to 1"),
    ),
    tags=("shapes", "softmax", "attention", "tensorflow_port"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.softmax.html",
        "https://tensorflow.org/versions/r2.4/api_docs/python/tf/nn/softmax",  # axis defaults to -1
        "https://github.com/pytorch/pytorch/issues/1020",  # implicit dim: 0 for 1-D/3-D, else 1
        "https://github.com/pytorch/pytorch/issues/1763",  # "F.softmax should take a dimension"
        "https://github.com/pytorch/pytorch/issues/84524",  # nn.Softmax still accepts no dim (open)
        "https://github.com/OpenNMT/OpenNMT-py/pull/487",  # the implicit-dim warning seen on 0.3.0
    ),
)
