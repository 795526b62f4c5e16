# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `backbone.eval()` does not freeze the backbone
#
# To fine-tune only a new head, the pretrained backbone is "frozen" with
# `model.backbone.eval()`, and the optimizer is built from `model.parameters()`. The
# BatchNorm statistics indeed stop changing, which looks like confirmation. But the
# backbone's weights keep training at the head's learning rate, the pretrained features
# drift, and a checkpoint of the "frozen" backbone differs from the one that was loaded.
# Evaluation mode changes how some layers compute; it has nothing to do with which weights
# receive gradients.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A backbone with BatchNorm, a new head, ten SGD steps with the backbone in eval mode.

# %%
STEPS = 10
LR = 0.1


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Sequential(nn.Linear(4, 8), nn.BatchNorm1d(8), nn.ReLU())
        self.head = nn.Linear(8, 1)

    def forward(self, x):
        return self.head(self.backbone(x))


def setup(device):
    with seeded(0):
        model = Net()
        x = torch.randn(32, 4)
        y = torch.randn(32, 1)
    return model.to(device), x.to(device), y.to(device)


def describe(model, weights_before, stats_before):
    params = list(model.backbone.parameters())
    bn = model.backbone[1]
    return {
        "backbone_training": model.backbone.training,
        "requires_grad": [p.requires_grad for p in params],
        "weights_unchanged": all(torch.equal(p, b) for p, b in zip(params, weights_before)),
        "stats_unchanged": all(torch.equal(s, b) for s, b in zip((bn.running_mean, bn.running_var), stats_before)),
        "head_weight": model.head.weight.detach().clone(),
    }


def snapshot(model):
    bn = model.backbone[1]
    return (
        [p.detach().clone() for p in model.backbone.parameters()],
        (bn.running_mean.clone(), bn.running_var.clone()),
    )


def broken(device):
    model, x, y = setup(device)
    weights_before, stats_before = snapshot(model)
    model.backbone.eval()  # meant as "freeze the backbone"
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return describe(model, weights_before, stats_before)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `eval()` sets one flag, `training = False`, on the module and all its children, and the
# only thing that reads that flag is the code of layers that behave differently in training
# and inference: Dropout stops dropping, BatchNorm normalises with its running statistics and
# stops updating them. Autograd never looks at it. The backbone's parameters still have
# `requires_grad=True`, so the backward pass computes their gradients, and they are in the
# optimizer because `model.parameters()` lists every parameter, so every step updates them.
# The frozen BatchNorm statistics are the misleading part: they are the one thing `eval()`
# does freeze, and seeing them stand still makes the rest look frozen too. (The reverse
# mistake also exists: `requires_grad_(False)` alone freezes the weights but leaves BatchNorm
# updating its statistics in training mode.) A loop that calls `model.train()` at the start
# of every epoch undoes `backbone.eval()` as well.
#
# ## The fix
# Freezing takes two separate switches, one per mechanism: `backbone.requires_grad_(False)`
# stops the weights (and pass the optimizer only the tensors that still require grad), and
# `backbone.eval()`, re-applied after every `model.train()`, keeps BatchNorm's statistics and
# Dropout in inference behaviour.


# %%
def fixed(device):
    model, x, y = setup(device)
    weights_before, stats_before = snapshot(model)
    model.backbone.requires_grad_(False)  # no gradients: the weights stay
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    for _ in range(STEPS):
        model.train()
        model.backbone.eval()  # and BatchNorm keeps its statistics
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return describe(model, weights_before, stats_before)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The autograd notes have a paragraph on exactly this confusion ("Evaluation Mode
# (`nn.Module.eval()`)" under "Locally disabling gradient computation"): evaluation mode is
# not a mechanism to disable gradient computation, it is listed there only because it is
# sometimes mistaken for one, and it is orthogonal to no-grad mode. On the PyTorch Forums,
# "model.eval() vs with torch.no_grad()" gets the answer that `train()` and `eval()` do not
# change anything about gradient calculation, and in "What does eval() do for BatchNorm at
# code aspect?" a user observes that after `eval()` the `requires_grad` flags of the weights
# are still `True` and asks what changed at all. Module modes have worked this way on every
# release.

# %% [markdown]
# ## How the harness checks it
# The reverse mistake is a look-alike: a backbone frozen with `requires_grad_(False)` but left
# in training mode keeps its weights while its BatchNorm statistics drift. It also "changes
# despite being frozen", but in the buffers, not the weights; the symptom asks for the weights
# to have changed under `training=False`, so it refuses that case.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The backbone is in eval mode and its BatchNorm statistics did not move, yet its
    parameters still require grad and its weights changed."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["backbone_training"] is False
        and all(v["requires_grad"])
        and not v["weights_unchanged"]
        and v["stats_unchanged"]
    )


def near_miss(device):
    model, x, y = setup(device)
    weights_before, stats_before = snapshot(model)
    model.backbone.requires_grad_(False)  # weights frozen, but left in training mode
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return describe(model, weights_before, stats_before)


def check(run, device):
    """The backbone's weights and statistics are bit-for-bit unchanged, and the head equals one
    trained by hand (plain gradient descent on the closed-form gradient of the mean squared
    error) on the backbone's features computed in eval mode."""
    v = run.value
    assert v["weights_unchanged"] and v["stats_unchanged"] and not any(v["requires_grad"]), v
    model, x, y = setup(device)
    model.backbone.eval()
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
    return {k: value[k] for k in ("backbone_training", "requires_grad", "weights_unchanged", "stats_unchanged")}


CASE = Case(
    id="model-eval-freezes-nothing",
    title="backbone.eval() does not freeze the backbone",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line='A backbone "frozen" with .eval() keeps training: eval() does not stop gradients.',
    # The training flag has never been read by autograd or the optimizers.
    affects=(Affects("*", reason="module modes and autograd are independent on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: Autograd mechanics, Locally disabling gradient computation, "
            "Evaluation Mode (nn.Module.eval())",
            url="https://docs.pytorch.org/docs/stable/notes/autograd.html#locally-disabling-gradient-computation",
        ),
        Source(
            title="PyTorch Forums: model.eval() vs with torch.no_grad()",
            url="https://discuss.pytorch.org/t/model-eval-vs-with-torch-no-grad/19615/37",
        ),
        Source(
            title="PyTorch Forums: What does eval() do for BatchNorm at code aspect?",
            url="https://discuss.pytorch.org/t/what-does-eval-do-for-batchnorm-at-code-aspect/31614",
        ),
    ),
    tags=("training", "eval", "freezing", "batchnorm", "requires_grad"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.eval",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.BatchNorm1d.html",
    ),
)
