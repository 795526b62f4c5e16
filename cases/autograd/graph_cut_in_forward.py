# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A helper under `no_grad` cuts the graph inside `forward`
#
# The loss goes down for a few steps and then stalls above what the model should reach.
# No error, no warning. Printing `p.grad` after `loss.backward()` shows the answer: the head
# has a gradient, every layer before it has `None`. Somewhere in `forward` the activations
# went through a small helper that was decorated with `@torch.no_grad()` when it was written
# for evaluation, and from that point back nothing is recorded. Only the layers after the cut
# ever train.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# An encoder, a standardisation step and a head. The standardisation helper carries the
# `@torch.no_grad()` decorator it got in the evaluation script it was copied from.

# %%
STEPS = 30
LR = 0.1


@torch.no_grad()  # written for evaluation, where no gradient is needed
def standardize(h):
    return (h - h.mean(0)) / (h.std(0) + 1e-5)


def standardize_differentiable(h):
    return (h - h.mean(0)) / (h.std(0) + 1e-5)


class Net(nn.Module):
    def __init__(self, norm):
        super().__init__()
        self.encoder = nn.Linear(4, 8)
        self.head = nn.Linear(8, 1)
        self.norm = norm

    def forward(self, x):
        return self.head(self.norm(torch.tanh(self.encoder(x))))


def setup(device, norm):
    with seeded(0):
        model = Net(norm)
        x = torch.randn(16, 4)
        y = torch.randn(16, 1)
    return model.to(device), x.to(device), y.to(device)


def train(model, x, y):
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    encoder_before = model.encoder.weight.detach().clone()
    first_grad = None
    losses = []
    for step in range(STEPS):
        opt.zero_grad()
        loss = F.mse_loss(model(x), y)
        loss.backward()
        if step == 0:
            g = model.encoder.weight.grad
            first_grad = None if g is None else g.clone()
            head_grad_none = model.head.weight.grad is None
        opt.step()
        losses.append(loss.item())
    return {
        "encoder_requires_grad": model.encoder.weight.requires_grad,
        "encoder_grad": first_grad,  # after the first backward
        "head_grad_none": head_grad_none,
        "encoder_unchanged": torch.equal(model.encoder.weight, encoder_before),
        "loss_first": losses[0],
        "loss_last": losses[-1],
    }


def broken(device):
    model, x, y = setup(device, standardize)
    return train(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Autograd records an operation only when grad mode is on and one of its inputs requires
# grad. `torch.no_grad()` switches grad mode off for everything that runs inside it, and as
# a decorator it does so for every call of the function, wherever it is called from. So
# `standardize` returns a tensor with `requires_grad=False` and no `grad_fn`: to autograd it
# is a constant that came from nowhere. The head is applied after it, so the head's weight
# and bias are still connected to the loss and get gradients; the encoder is only reachable
# through the constant, so `backward()` never visits it and its `.grad` stays `None`. The
# optimizer skips parameters without a gradient, so the encoder keeps its random weights for
# the whole run, and the loss improves only as far as a linear head on random features can
# take it. `.detach()` and `.data` inside `forward` cut the graph in exactly the same way,
# and so does a round trip through NumPy or `.item()`.
#
# ## The fix
# Keep grad-mode switches out of code that `forward` calls: write the helper without the
# decorator, and put `torch.no_grad()` (or `torch.inference_mode()`) around the evaluation
# loop instead, where it belongs. A quick check after the first `backward()`, listing the
# parameters whose `.grad` is `None`, finds any remaining cut.


# %%
def fixed(device):
    model, x, y = setup(device, standardize_differentiable)
    return train(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `torch.no_grad` documentation says that every result computed in the mode has
# `requires_grad=False` and that the class also works as a decorator; the autograd notes
# ("Locally disabling gradient computation") describe the same mode as the way to exclude a
# subgraph from the backward pass, which is what happened here without being meant. The
# speechbrain issue linked below is a user's report of the `.detach()` form: a `detach()` on
# the features before the encoder cut the graph, and gradients with respect to the input only
# appeared once it was removed. torch-audit's rule TA104 ("No Gradients Found") and a plain
# `[n for n, p in model.named_parameters() if p.grad is None]` after the first step are the
# runtime checks. Grad mode has behaved this way since `no_grad` replaced `volatile` in
# 0.4.0.

# %% [markdown]
# ## How the harness checks it
# An encoder without a gradient is expected when it was frozen on purpose
# (`encoder.requires_grad_(False)`): it also has `grad=None` and keeps its weights while the
# head trains. The symptom requires the encoder to still ask for a gradient, so a deliberate
# freeze is not claimed.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The encoder still requires grad, yet after backward its gradient is None and after every
    step its weight is unchanged, while the head (after the cut) did get a gradient."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["encoder_requires_grad"] and v["encoder_grad"] is None and v["encoder_unchanged"] and not v["head_grad_none"]
    )


def near_miss(device):
    model, x, y = setup(device, standardize_differentiable)
    model.encoder.requires_grad_(False)  # frozen on purpose
    return train(model, x, y)


def check(run, device):
    """The encoder's first gradient equals the gradient of the same loss written out by hand
    in float64 (F.linear, tanh, standardisation, head) and differentiated with
    torch.autograd.grad; and the encoder's weights moved."""
    model, x, y = setup(device, standardize_differentiable)
    w = model.encoder.weight.detach().double().requires_grad_()
    b = model.encoder.bias.detach().double()
    hw = model.head.weight.detach().double()
    hb = model.head.bias.detach().double()
    h = torch.tanh(x.double() @ w.T + b)
    h = (h - h.mean(0)) / (h.std(0) + 1e-5)
    loss = ((h @ hw.T + hb - y.double()) ** 2).mean()
    (expected,) = torch.autograd.grad(loss, w)
    assert run.value["encoder_grad"] is not None, "the encoder got no gradient"
    torch.testing.assert_close(run.value["encoder_grad"], expected.float(), rtol=1e-4, atol=1e-6)
    assert not run.value["encoder_unchanged"], "the encoder did not train"


def stable(value):
    """Keep the structure (which tensors got gradients, what moved), not the trained floats."""
    return {
        "encoder_grad_none": value["encoder_grad"] is None,
        "head_grad_none": value["head_grad_none"],
        "encoder_unchanged": value["encoder_unchanged"],
        "loss_fell": value["loss_last"] < value["loss_first"],
    }


CASE = Case(
    id="graph-cut-in-forward",
    title="A helper under no_grad cuts the graph inside forward",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss stalls early: every layer before a no_grad helper in forward has grad None.",
    # Grad mode switched off inside forward has detached everything computed there since
    # torch.no_grad appeared (0.4.0); no release changed it.
    affects=(Affects("*", reason="grad mode and detach() behave the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: torch.no_grad (results have requires_grad=False; also works as a decorator)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.no_grad.html",
        ),
        Source(
            title="speechbrain/speechbrain#1396: Usage of Speechbrain functions breaks PyTorch computation graph",
            url="https://github.com/speechbrain/speechbrain/issues/1396",
        ),
        Source(
            title="torch-audit (RULES.md), rule TA104: No Gradients Found", url="https://github.com/RMalkiv/torch-audit"
        ),
    ),
    tags=("autograd", "no_grad", "detach", "training"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",
        "https://github.com/vturrisi/solo-learn/issues/135",  # does feats.detach() stop the encoder from learning?
    ),
)
