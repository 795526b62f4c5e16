# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A layer defined in `__init__` that `forward` never calls
#
# `print(model)` lists three layers, the parameter count includes all three, the optimizer
# holds every tensor, the checkpoint saves them. Training runs and the loss falls. But one of
# the layers was left out of `forward` (dropped while debugging, or renamed on one side
# only), so its weights never receive a gradient and end the run exactly as they were
# initialised. On a single GPU nothing says so; under `DistributedDataParallel` the same model
# fails with an error about parameters that "were not used in producing loss", which is often
# the first time anyone notices.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A three-layer MLP whose `forward` skips `fc2`. Because `fc2` maps 8 features to 8, the
# shapes still line up, so nothing fails.

# %%
STEPS = 20
LR = 0.1


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(4, 8)
        self.fc2 = nn.Linear(8, 8)
        self.out = nn.Linear(8, 1)


class Skipping(MLP):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        return self.out(h)  # fc2 is never applied


class Complete(MLP):
    def forward(self, x):
        h = torch.relu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return self.out(h)


def setup(device, cls):
    with seeded(0):
        model = cls()
        x = torch.randn(16, 4)
        y = torch.randn(16, 1)
    return model.to(device), x.to(device), y.to(device)


def train(model, x, y):
    called = set()
    hooks = [
        m.register_forward_hook(lambda mod, inp, out, name=name: called.add(name)) for name, m in model.named_children()
    ]
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    before = {n: p.detach().clone() for n, p in model.named_parameters()}
    for step in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        if step == 0:
            grad_none = sorted(n for n, p in model.named_parameters() if p.grad is None)
        opt.step()
    for h in hooks:
        h.remove()
    return {
        "in_optimizer": sum(len(g["params"]) for g in opt.param_groups),
        "called": sorted(called),
        "grad_none": grad_none,
        "unchanged": sorted(n for n, p in model.named_parameters() if torch.equal(p, before[n])),
        "output": model(x).detach(),
    }


def broken(device):
    model, x, y = setup(device, Skipping)
    return train(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Registration and use are two separate things in PyTorch. Assigning `self.fc2 = nn.Linear(...)`
# in `__init__` registers the layer: from then on it appears in `print(model)`,
# `parameters()`, `state_dict()` and every `.to()`. Whether it takes part in the computation
# is decided only by what `forward` actually runs, and autograd records only what ran. So
# the loss has no path back to `fc2.weight`; `backward()` leaves its `.grad` at `None`; and
# the optimizer, which skips tensors without a gradient, never touches it (not even weight
# decay applies). The model trains as a two-layer network carrying a third layer's weights as
# dead luggage. A branch that is never taken (`if self.use_fc2:` with the flag wrongly set)
# behaves the same. `DistributedDataParallel` is the one component that checks: it expects a
# gradient for every parameter and raises unless built with `find_unused_parameters=True`.
#
# ## The fix
# Call the layer in `forward` (or delete it). To find such layers, look after the first
# `backward()` for parameters whose `.grad` is still `None`, or register a forward hook on
# every submodule and compare the modules that ran with the modules that exist, as the
# training loop here does.


# %%
def fixed(device):
    model, x, y = setup(device, Complete)
    return train(model, x, y)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Users usually meet this through `DistributedDataParallel`'s error, "your module has
# parameters that were not used in producing loss" (Megvii-BaseDetection/YOLOX#885 is one of
# many reports), and then locate the culprit by printing the parameters whose gradient is
# `None` after `backward()`, as in lucidrains/PaLM-rlhf-pytorch#46, where that loop named a
# LayerNorm gain. Setting `find_unused_parameters=True` makes the error go away and leaves the
# layer untrained, exactly as on a single device. torch-audit has a rule for it,
# TA500 "Unused Layer (Zombie)": a layer defined in the model but never called in the
# forward pass. torchtest2 lists "a layer you forgot to call" first among the bugs that do not
# crash. The `DistributedDataParallel` documentation describes `find_unused_parameters`.
# Single-process PyTorch has never checked this.

# %% [markdown]
# ## How the harness checks it
# A layer can run and still not learn. If the activations that feed `fc2` are all zero (dead
# ReLUs before it), `fc2.weight` gets a gradient of exact zeros and keeps its values under
# plain SGD; but the layer was called and its `.grad` is a tensor, not `None`. The symptom
# requires `fc2` to be missing from the modules that ran and its gradient to be `None`, so the
# dead-unit case is not claimed.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """fc2 is in the optimizer, never ran (no forward hook fired), got no gradient (None) and
    kept its initial values, while the layers that ran did change."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["in_optimizer"] == 6
        and "fc2" not in v["called"]
        and {"fc2.weight", "fc2.bias"} <= set(v["grad_none"])
        and v["unchanged"] == ["fc2.bias", "fc2.weight"]
    )


def near_miss(device):
    model, x, y = setup(device, Complete)
    with torch.no_grad():
        model.fc1.bias.fill_(-100.0)  # every ReLU after fc1 is dead: fc2 sees zeros
    return train(model, x, y)


def check(run, device):
    """Every module ran and every parameter got a gradient and moved; and the output equals that
    of the three-layer network written out with F.linear from the same initial weights, trained
    by hand with plain gradient descent (torch.autograd.grad on the functional form)."""
    v = run.value
    assert v["called"] == ["fc1", "fc2", "out"], v["called"]
    assert v["grad_none"] == [] and v["unchanged"] == [], v
    model, x, y = setup(device, Complete)
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]
    w1, b1, w2, b2, w3, b3 = params

    def net(inp):
        h = torch.relu(F.linear(inp, w1, b1))
        h = torch.relu(F.linear(h, w2, b2))
        return F.linear(h, w3, b3)

    for _ in range(STEPS):
        grads = torch.autograd.grad(((net(x) - y) ** 2).mean(), params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= LR * g
    with torch.no_grad():
        torch.testing.assert_close(v["output"], net(x), rtol=1e-4, atol=1e-5)


def stable(value):
    """Keep the structure; the trained output varies in its last digits between releases."""
    return {k: value[k] for k in ("in_optimizer", "called", "grad_none", "unchanged")}


CASE = Case(
    id="parameter-unused-in-forward",
    title="A layer defined in __init__ that forward never calls",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A layer listed by print(model) keeps its initial weights: forward never calls it.",
    # Registration in __init__ and use in forward have always been independent; only
    # DistributedDataParallel checks.
    affects=(Affects("*", reason="module registration and autograd behave the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="lucidrains/PaLM-rlhf-pytorch#46: norm.gamma not used during backprop",
            url="https://github.com/lucidrains/PaLM-rlhf-pytorch/issues/46",
        ),
        Source(
            title="Megvii-BaseDetection/YOLOX#885: Expected to have finished reduction in the prior iteration "
            "... parameters that were not used in producing loss",
            url="https://github.com/Megvii-BaseDetection/YOLOX/issues/885",
        ),
        Source(
            title="torch-audit (RULES.md), rule TA500: Unused Layer (Zombie)",
            url="https://github.com/RMalkiv/torch-audit",
        ),
        Source(
            title="torchtest2: pre-train sanity checks ('a layer you forgot to call')",
            url="https://pypi.org/project/torchtest2/",
        ),
    ),
    tags=("training", "nn_module", "unused_parameters", "ddp"),
    references=("https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html",),
)
