# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `p.require_grad = False`: a typo that freezes nothing
#
# The backbone was frozen, or so the code says: `for p in backbone.parameters():
# p.require_grad = False`. Training runs, and the pretrained features drift away from what
# they were, the run takes as much memory and time as full fine-tuning, and the backbone's
# weights in the saved checkpoint differ from the ones you loaded. The attribute that freezes
# a tensor is `requires_grad`, with an `s`. Assigning the misspelled name raised nothing: it
# created a new, meaningless attribute on each parameter.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A pretrained backbone to keep fixed and a new head to train, ten SGD steps.

# %%
STEPS = 10
LR = 0.1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.Tanh())
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def setup(device):
    with seeded(0):
        model = Net()
        x = torch.randn(16, 4)
        y = torch.randn(16, 1)
    return model.to(device), x.to(device), y.to(device)


def train(model, x, y, opt, steps):
    for _ in range(steps):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()


def describe(model, backbone_before):
    params = list(model.backbone.parameters())
    return {
        "requires_grad": [p.requires_grad for p in params],
        "typo_attribute": [p.__dict__.get("require_grad") for p in params],
        "backbone_grad_none": [p.grad is None for p in params],
        "backbone_unchanged": all(torch.equal(p, b) for p, b in zip(params, backbone_before)),
        "head_weight": model.head.weight.detach().clone(),
    }


def broken(device):
    model, x, y = setup(device)
    before = [p.detach().clone() for p in model.backbone.parameters()]
    for p in model.backbone.parameters():
        p.require_grad = False  # typo: the attribute is requires_grad
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    train(model, x, y, opt, STEPS)
    return describe(model, before)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A `torch.Tensor`, and so an `nn.Parameter`, is a Python object with a `__dict__`: any
# attribute name can be assigned to it, and Python only complains when an unknown name is
# *read*. `p.require_grad = False` therefore stores `False` under a name that autograd never
# looks at, while `p.requires_grad` stays `True`. The filter
# `[p for p in model.parameters() if p.requires_grad]` keeps every tensor, the backward pass
# computes gradients for the backbone, and the optimizer updates it at every step: ordinary
# full fine-tuning, under code that reads like a freeze. The same silent no-op happens with
# any other misspelling (`requires_grads`, `require_grads`).
#
# ## The fix
# Spell it `requires_grad`, or better, call the method `module.requires_grad_(False)`: a
# misspelled *method* raises `AttributeError` at once instead of creating an attribute. Then
# check the result instead of trusting the line, for example by counting the tensors that
# still require grad.


# %%
def fixed(device):
    model, x, y = setup(device)
    before = [p.detach().clone() for p in model.backbone.parameters()]
    model.backbone.requires_grad_(False)  # a method: a typo here raises AttributeError
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    train(model, x, y, opt, STEPS)
    return describe(model, before)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The misspelling is common enough that PyTorch's linter, TorchFix, has a dedicated rule,
# TOR002: "Likely typo `require_grad` in assignment. Did you mean `requires_grad`?". Running it
# over pytorch/benchmark found the typo in a vendored BERT model (pytorch/benchmark#1771, fixed
# upstream in codertimo/BERT-pytorch#104, whose description notes that the code raised no error
# but did not do what it meant); thuml/Time-Series-Library#743 fixes the same line in its
# positional embeddings. There the tensor (a positional-encoding table) did not require grad
# in the first place; on a parameter, as here, the typo leaves it training. Python attribute assignment
# has always accepted new names, so every release behaves like this.

# %% [markdown]
# ## How the harness checks it
# A backbone that was frozen correctly can still move: if `requires_grad` is set to `False`
# in the middle of training while the optimizer has momentum and the gradients are zeroed
# rather than set to `None`, the momentum keeps pushing it (that is
# `frozen-params-keep-moving`). There `requires_grad` really is `False`; the symptom asks for
# it to still be `True` next to the misspelled attribute, so it does not claim that case.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Every backbone parameter carries the misspelled attribute set to False, still has
    requires_grad=True, received gradients, and changed during training."""
    if run.error is not None:
        return False
    v = run.value
    return (
        all(a is False for a in v["typo_attribute"])
        and all(v["requires_grad"])
        and not any(v["backbone_grad_none"])
        and not v["backbone_unchanged"]
    )


def near_miss(device):
    model, x, y = setup(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=0.9)
    train(model, x, y, opt, 3)
    before = [p.detach().clone() for p in model.backbone.parameters()]
    model.backbone.requires_grad_(False)  # spelled right, but frozen mid-training
    for _ in range(3):
        opt.zero_grad(set_to_none=False)  # gradients zeroed, not removed: momentum still steps
        F.mse_loss(model(x), y).backward()
        opt.step()
    return describe(model, before)


def check(run, device):
    """The backbone is frozen (requires_grad False, no gradient, bit-for-bit unchanged) and the
    head equals one trained by hand: plain gradient descent on the closed-form gradient of the
    mean squared error over the backbone's fixed features."""
    v = run.value
    assert not any(v["requires_grad"]) and all(v["backbone_grad_none"]) and v["backbone_unchanged"], v
    model, x, y = setup(device)
    with torch.no_grad():
        feats = model.backbone(x)
        w = model.head.weight.clone()
        b = model.head.bias.clone()
        for _ in range(STEPS):
            residual = feats @ w.T + b - y
            w -= LR * 2.0 / len(x) * residual.T @ feats
            b -= LR * 2.0 / len(x) * residual.sum(0)
    torch.testing.assert_close(v["head_weight"], w, rtol=1e-4, atol=1e-5)


def stable(value):
    """Keep the flags; the trained head varies in its last digits between releases."""
    return {k: value[k] for k in ("requires_grad", "typo_attribute", "backbone_grad_none", "backbone_unchanged")}


CASE = Case(
    id="requires-grad-typo",
    title="p.require_grad = False: a typo that freezes nothing",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line='A "frozen" backbone keeps training: p.require_grad = False (no s) freezes nothing.',
    # Tensors accept new Python attributes on every release.
    affects=(Affects("*", reason="Python attribute assignment on a tensor behaves the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="TorchFix rule TOR002: Likely typo `require_grad` in assignment",
            url="https://github.com/pytorch-labs/torchfix",
        ),
        Source(
            title="pytorch/benchmark#1771: Fix require_grad typo", url="https://github.com/pytorch/benchmark/pull/1771"
        ),
        Source(
            title="codertimo/BERT-pytorch#104: Fix require_grad typo",
            url="https://github.com/codertimo/BERT-pytorch/pull/104",
        ),
    ),
    tags=("training", "requires_grad", "freezing", "typo"),
    references=(
        "https://github.com/thuml/Time-Series-Library/pull/743",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.requires_grad_",
    ),
)
