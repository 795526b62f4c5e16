# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A freezing filter that matches the wrong names
#
# You fine-tune a pretrained network with a line borrowed from a ResNet tutorial: every
# parameter whose name does not contain `"fc"` gets `requires_grad = False`, so that only the
# new head trains. The run finishes, the loss even drops a little, and the classifier is as
# bad as it was at step 0. In this network the head is called `classifier`; the only names
# with `fc` in them belong to a squeeze-and-excitation block inside the backbone. Those layers
# trained. The head was frozen with the rest and never moved.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small backbone with a squeeze-and-excitation block whose layers are named `fc1` and `fc2`
# (as in torchvision's `SqueezeExcitation`, used by MobileNetV3 and EfficientNet), a new head
# named `classifier`, and the name filter written for a model whose head is `fc`.

# %%
STEPS = 20
LR = 0.5


class SqueezeExcite(nn.Module):
    def __init__(self, channels):
        super().__init__()
        self.fc1 = nn.Linear(channels, channels // 2)
        self.fc2 = nn.Linear(channels // 2, channels)

    def forward(self, x):
        return x * torch.sigmoid(self.fc2(torch.relu(self.fc1(x))))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.features = nn.Sequential(nn.Linear(6, 8), nn.ReLU(), SqueezeExcite(8))
        self.classifier = nn.Linear(8, 3)

    def forward(self, x):
        return self.classifier(self.features(x))


def setup(device):
    with seeded(0):
        model = Net()
        x = torch.randn(32, 6)
        y = torch.randint(0, 3, (32,))
    return model.to(device), x.to(device), y.to(device)


def train(model, x, y, params):
    opt = torch.optim.SGD(params, lr=LR)
    losses = []
    for _ in range(STEPS):
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses


def report(model, head_before, losses):
    return {
        "trainable": sorted(n for n, p in model.named_parameters() if p.requires_grad),
        "head_unchanged": torch.equal(model.classifier.weight, head_before),
        "head_weight": model.classifier.weight.detach().clone(),
        "loss_first": losses[0],
        "loss_last": losses[-1],
    }


def broken(device):
    model, x, y = setup(device)
    for name, p in model.named_parameters():
        if "fc" not in name:  # "train only the fc head"
            p.requires_grad = False
    head_before = model.classifier.weight.detach().clone()
    losses = train(model, x, y, [p for p in model.parameters() if p.requires_grad])
    return report(model, head_before, losses)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `named_parameters()` yields dotted paths such as `features.2.fc1.weight` and
# `classifier.bias`, and `"fc" in name` is a plain substring test on that string. It knows
# nothing about which module is the head: it is true for `features.2.fc1.weight` and false
# for `classifier.weight`. So the filter froze the head together with the stem and left the
# two squeeze-and-excitation layers trainable. Nothing complains: the optimizer receives the
# four tensors that still require grad, the backward pass computes their gradients, the loss
# falls a little because those layers can still bend the features, and the head keeps the
# random weights it was built with. The same filter is correct on a torchvision ResNet (head
# `fc`, no other `fc` anywhere) and wrong on MobileNetV3, EfficientNet or any model whose
# head has another name; a test such as `"layer1" in name` has the same flaw, since it also
# matches `layer10` and `layer11`.
#
# ## The fix
# Freeze by module, not by a piece of a name: `model.features.requires_grad_(False)`
# reaches exactly the parameters of the backbone, and the head's own parameters stay
# trainable. Then print the list of trainable names once before training starts: it must be
# the head and nothing else.


# %%
def fixed(device):
    model, x, y = setup(device)
    model.features.requires_grad_(False)  # the backbone, by module
    head_before = model.classifier.weight.detach().clone()
    losses = train(model, x, y, [p for p in model.parameters() if p.requires_grad])
    return report(model, head_before, losses)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The filter itself is a widespread idiom: a gist that freezes a torchvision ResNet-18 with
# `if not ("fc" in name)` (linked below) and many fine-tuning tutorials spell it this way,
# and it is correct only because that model's head happens to be the one module named `fc`.
# The forum thread "Best practice for freezing layers?" compares freezing through
# `requires_grad` with handing the optimizer only the head's parameters, and recommends the
# former; neither protects against selecting the wrong tensors. torchvision's
# `SqueezeExcitation` (in `torchvision/ops/misc.py`) names its two layers `fc1` and `fc2`,
# which is how real backbones end up matching. torchtest's `assert_vars_change` (a port of
# Chase Roberts' mltest) is the test that catches it: after one training step every tensor
# that is meant to train must differ from its starting value. No torch release changes any
# of this.

# %% [markdown]
# ## How the harness checks it
# A head that does not move is not always a frozen head. If nothing is frozen but the
# optimizer is built from `model.features.parameters()` only, the head also keeps its
# initial weights, yet its parameters still require grad (a different mistake: the
# optimizer's parameter list); the symptom asks for the head to be frozen while backbone
# tensors are trainable, and refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The head's weight is bit-for-bit its initial value and no head tensor is trainable, while
    tensors of the backbone (those whose names contain "fc") are."""
    if run.error is not None:
        return False
    trainable = run.value["trainable"]
    head_trainable = [n for n in trainable if n.startswith("classifier.")]
    backbone_trainable = [n for n in trainable if n.startswith("features.")]
    return run.value["head_unchanged"] and not head_trainable and bool(backbone_trainable)


def near_miss(device):
    model, x, y = setup(device)
    head_before = model.classifier.weight.detach().clone()
    losses = train(model, x, y, model.features.parameters())  # nothing frozen; head not in the optimizer
    return report(model, head_before, losses)


def check(run, device):
    """The trainable tensors are exactly the head's, named from the module tree; and the head's
    weight equals a head trained by hand (softmax cross-entropy gradient, plain gradient
    descent) on the backbone's fixed features."""
    model, x, y = setup(device)
    expected = sorted("classifier." + n for n, _ in model.classifier.named_parameters())
    assert run.value["trainable"] == expected, run.value["trainable"]
    with torch.no_grad():
        feats = model.features(x)
        w = model.classifier.weight.clone()
        b = model.classifier.bias.clone()
        rows = torch.arange(len(y), device=y.device)
        for _ in range(STEPS):
            grad_logits = torch.softmax(feats @ w.T + b, dim=1)
            grad_logits[rows, y] -= 1
            grad_logits /= len(y)
            w -= LR * grad_logits.T @ feats
            b -= LR * grad_logits.sum(0)
    torch.testing.assert_close(run.value["head_weight"], w, rtol=1e-4, atol=1e-5)


def stable(value):
    """The trained floats vary in their last digits between releases and kernels: keep which
    tensors were trainable, whether the head moved, and whether the loss fell."""
    return {
        "trainable": value["trainable"],
        "head_unchanged": value["head_unchanged"],
        "loss_fell": value["loss_last"] < value["loss_first"],
    }


CASE = Case(
    id="frozen-by-name-filter",
    title="A freezing filter that matches the wrong names",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line='The new head never trains: the filter "fc" not in name froze it, not the backbone.',
    # A substring test on parameter names has always been a substring test.
    affects=(Affects("*", reason="named_parameters() and requires_grad behave the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch Forums: Best practice for freezing layers?",
            url="https://discuss.pytorch.org/t/best-practice-for-freezing-layers/58156",
        ),
        Source(
            title="torchtest: assert_vars_change, a test that every trained tensor changes after a step",
            url="https://pypi.org/project/torchtest/",
        ),
    ),
    tags=("training", "fine_tuning", "requires_grad", "freezing"),
    references=(
        "https://gist.github.com/rahulvigneswaran/1422e60471f85334ed3232087cee2a63",  # if not ("fc" in name)
        "https://github.com/pytorch/vision/blob/main/torchvision/ops/misc.py",  # SqueezeExcitation.fc1 / fc2
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.requires_grad_",
    ),
)
