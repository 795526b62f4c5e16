# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `Adam(weight_decay=...)` is not AdamW
#
# A paper or a reference implementation trains with "Adam, weight decay 0.1", and you write
# `torch.optim.Adam(params, lr=..., weight_decay=0.1)`. It runs and the loss goes down, but the
# regularisation is not the one you asked for. Raising or lowering `weight_decay` barely changes
# how much the weights with large gradients shrink. Weights that get little gradient from the
# data shrink by almost a full learning rate per step, whatever the coefficient. The results do
# not match the reference, which decays every weight by the same fraction `lr * weight_decay` per
# step.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two weights, both starting at 1. The data gives the first a large, steady gradient (10) and
# the second none at all (0). Three steps of Adam with `lr=0.01` and `weight_decay=0.1`. With
# decoupled weight decay, each step would shrink every weight by the factor `1 - lr *
# weight_decay = 0.999`.

# %%
LR, WD, STEPS = 0.01, 0.1, 3
DATA_GRAD = [10.0, 0.0]  # d(loss)/dw from the data alone


def train(optimizer_class, device, weight_decay=WD):
    w = torch.tensor([1.0, 1.0], device=device, requires_grad=True)
    grad = torch.tensor(DATA_GRAD, device=device)
    opt = optimizer_class([w], lr=LR, weight_decay=weight_decay)
    for _ in range(STEPS):
        opt.zero_grad()
        (w * grad).sum().backward()  # w.grad == DATA_GRAD at every step
        opt.step()
    return w.detach().clone()


def broken(device):
    return train(torch.optim.Adam, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # both weights at 0.97: a full lr per step, whatever the decay

# %% [markdown]
# ## Why
# `Adam`'s `weight_decay` is an L2 penalty. Before anything else, the step adds
# `weight_decay * w` to the gradient. That sum then goes through Adam's moment estimates and is
# divided by the square root of its own running second moment, like any gradient. That division
# is what makes Adam scale-free, and it also rescales the decay, differently for every weight.
#
# A weight with a large data gradient `g` gets a decay term that is small next to `g`. Its step
# is about `lr * sign(g)`, so the decay changes it by at most about `lr * wd * w / |g|`, a
# small fraction of the decay asked for. Here the first weight ends where Adam without any decay
# would put it: 0.97. A weight with no data gradient has only the decay term as its gradient.
# Adam normalises it to a step of size about `lr`, so the weight shrinks by about a full
# learning rate per step. That is 10 times `lr * wd` here, and it would be the same for any
# `weight_decay > 0`. The second weight also ends at 0.97, not at 0.997.
#
# For plain SGD the two are the same update, `w -= lr * (g + wd * w)`. For adaptive methods
# they are not. That is the point of Loshchilov and Hutter's "Decoupled Weight Decay
# Regularization", which proposed AdamW: shrink the weights directly, `w -= lr * wd * w`, outside
# the adaptive step.
#
# ## The fix
# Use `torch.optim.AdamW` when you mean weight decay (it has existed since torch 1.2; note that
# its default `weight_decay` is 0.01, not 0). Every weight is then multiplied by `1 - lr * wd`
# at every step, and the Adam step uses the data gradient alone. Keep `Adam(weight_decay=...)`
# only when you really want an L2 penalty inside Adam, for example to reproduce a run that used
# it.


# %%
def fixed(device):
    return train(torch.optim.AdamW, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))  # [0.9670, 0.9970]

# %% [markdown]
# ## Where it comes from
# Loshchilov and Hutter, "Decoupled Weight Decay Regularization" (ICLR 2019, arXiv:1711.05101),
# show that L2 regularisation and weight decay are equivalent for SGD but not for adaptive
# gradient methods, and that libraries implementing Adam's weight decay as L2 get weaker
# regularisation for weights with large gradients. PyTorch added `AdamW` in 1.2, after
# pytorch/pytorch#3740 had proposed it in 2017. The documentation of each optimizer writes out
# its algorithm, showing where the decay term enters. Users kept asking which one `Adam`
# implements. pytorch/pytorch#41679 (2020) corrected `Adam`'s docstring to say that it does L2
# regularisation, not decoupled decay. pytorch/pytorch#48793 ("Weight_decay in torch.Adam") and
# pytorch/pytorch#38767 asked again. In google-deepmind/optax#417 ("Adam vs AdamW"), a
# maintainer tells a user porting a PyTorch recipe that PyTorch's `Adam` with
# `weight_decay != 0` is not AdamW. Newer releases give `Adam` a `decoupled_weight_decay` flag
# (documented in pytorch/pytorch#144984), but its default keeps the L2 behaviour shown here.

# %% [markdown]
# ## How the harness checks it
# A weight that shrinks by about `lr` per step is not always this pitfall. `AdamW` with a decay
# ten times too large (`weight_decay=1.0`) shrinks the gradient-free weight to 0.9703, close to
# the broken 0.97. But it decays the first weight as well (0.9406), as decoupled decay does, so
# the symptom refuses it: the symptom needs *both* weights to land where a full-`lr` Adam step
# puts them. The fix is checked against AdamW's update written out in plain Python.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Both weights ended at 1 - STEPS*lr (to 1e-4): the weight with no data gradient shrank by a
    full learning rate per step, and the weight with a large gradient got no decay at all."""
    if run.error is not None:
        return False
    target = torch.full((2,), 1.0 - STEPS * LR)
    return bool(torch.allclose(run.value.cpu(), target, rtol=0.0, atol=1e-4))


def near_miss(device):
    return train(torch.optim.AdamW, device, weight_decay=1.0)  # decoupled, but 10x too strong


def _adamw_by_hand():
    """AdamW's step written out in Python floats (betas 0.9, 0.999, eps 1e-8): decay the weight,
    then take the bias-corrected Adam step on the data gradient alone."""
    beta1, beta2, eps = 0.9, 0.999, 1e-8
    out = []
    for g in DATA_GRAD:
        w, m, v = 1.0, 0.0, 0.0
        for t in range(1, STEPS + 1):
            w *= 1.0 - LR * WD
            m = beta1 * m + (1 - beta1) * g
            v = beta2 * v + (1 - beta2) * g * g
            w -= LR * (m / (1 - beta1**t)) / ((v / (1 - beta2**t)) ** 0.5 + eps)
        out.append(w)
    return out  # [0.96703..., 0.999 ** 3]


def check(run, device):
    """The weights equal decoupled weight decay plus the data's Adam step, by hand."""
    torch.testing.assert_close(run.value, torch.tensor(_adamw_by_hand(), device=device))


CASE = Case(
    id="adam-weight-decay-is-not-adamw",
    title="Adam(weight_decay=...) is not AdamW",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Adam's weight_decay is an L2 term that Adam rescales: weights do not decay by lr * wd.",
    affects=(
        Affects("*", reason="Adam adds weight_decay * w to the gradient (L2); decoupled decay is AdamW's, by design"),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Loshchilov & Hutter: Decoupled Weight Decay Regularization (ICLR 2019)",
            url="https://arxiv.org/abs/1711.05101",
        ),
        Source(
            title="pytorch/pytorch#48793: Weight_decay in torch.Adam",
            url="https://github.com/pytorch/pytorch/issues/48793",
        ),
        Source(
            title="google-deepmind/optax#417: Adam vs AdamW", url="https://github.com/google-deepmind/optax/issues/417"
        ),
        Source(
            title="PyTorch docs: torch.optim.AdamW",
            url="https://docs.pytorch.org/docs/stable/generated/torch.optim.AdamW.html",
        ),
    ),
    tags=("training", "optimizer", "adam", "adamw", "weight_decay", "regularization"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.optim.Adam.html",
        "https://github.com/pytorch/pytorch/issues/38767",
        "https://github.com/pytorch/pytorch/pull/3740",  # the first AdamW proposal
        "https://github.com/pytorch/pytorch/pull/41679",  # Adam's docstring: L2, not decoupled decay
        "https://github.com/pytorch/pytorch/pull/144984",  # Adam(decoupled_weight_decay=...), default False
    ),
)
