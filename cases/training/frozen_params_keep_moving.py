# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Frozen halfway through training, and still moving
#
# A two-stage fine-tune: train everything for a while, then set `requires_grad = False` on
# the backbone and continue with the head alone. You check the backbone afterwards and it
# kept changing after the freeze, by steps that shrink only slowly: the "frozen" weights are
# not the ones you froze. `requires_grad` is `False`, the backbone gets no new gradients,
# and yet the optimizer keeps stepping it, because the gradients of the first stage were
# zeroed in place instead of removed, and the optimizer's momentum still remembers them.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# SGD with momentum over the whole model. After three steps the backbone is frozen; the loop
# clears gradients with `zero_grad(set_to_none=False)`, which was what a plain `zero_grad()`
# did before torch 2.0 and what code that wants to keep its gradient buffers still writes.

# %%
WARMUP = 3  # steps with everything trainable
STEPS = 3  # steps after the freeze
LR = 0.1
MOMENTUM = 0.9


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


def step(model, opt, x, y):
    opt.zero_grad(set_to_none=False)  # zero the gradient tensors, keep them allocated
    F.mse_loss(model(x), y).backward()
    opt.step()


def describe(model, frozen_at, head_at_freeze):
    params = list(model.backbone.parameters())
    return {
        "requires_grad": [p.requires_grad for p in params],
        "grad_is_zero_tensor": [p.grad is not None and not p.grad.any().item() for p in params],
        "grad_is_none": [p.grad is None for p in params],
        "moved_since_freeze": [not torch.equal(p, f) for p, f in zip(params, frozen_at)],
        "backbone": [p.detach().clone() for p in params],
        "head_moved": not torch.equal(model.head.weight, head_at_freeze),
    }


def broken(device):
    model, x, y = setup(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for _ in range(WARMUP):
        step(model, opt, x, y)
    model.backbone.requires_grad_(False)  # stage 2: train the head only
    frozen_at = [p.detach().clone() for p in model.backbone.parameters()]
    head_at_freeze = model.head.weight.detach().clone()
    for _ in range(STEPS):
        step(model, opt, x, y)
    return describe(model, frozen_at, head_at_freeze)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `requires_grad = False` only stops autograd from computing *new* gradients for a tensor; it
# does not touch the tensor's existing `.grad`, and it does not take the tensor out of the
# optimizer. What an optimizer skips is a parameter whose `.grad` is `None` (the optimizers
# in `torch.optim` test `p.grad is not None`). Here the backbone's `.grad` from the last
# warm-up step is still allocated; `zero_grad(set_to_none=False)` fills it with zeros and the
# frozen backward pass leaves it at zero. So at every later step SGD still processes the
# backbone: the momentum buffer becomes `0.9 * buffer + 0`, which is not zero, and the weight
# moves by `lr * buffer`, a decaying echo of the last real gradients. Weight decay does the
# same with a zero gradient (it adds `weight_decay * p`), and Adam keeps stepping with its
# running averages. Since torch 2.0 a plain `zero_grad()` sets gradients to `None`, which
# hides the problem in most loops; `set_to_none=False`, a manual `p.grad.zero_()`, or any
# release before 2.0 brings it back.
#
# ## The fix
# When freezing, also drop the gradients: `p.grad = None` for every frozen parameter (or
# clear with `zero_grad(set_to_none=True)`). With no `.grad`, the optimizer skips the tensor
# entirely, momentum and weight decay included. Building a new optimizer over the trainable
# parameters only is the other clean way, at the price of resetting the head's momentum too.


# %%
def fixed(device):
    model, x, y = setup(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for _ in range(WARMUP):
        step(model, opt, x, y)
    model.backbone.requires_grad_(False)
    for p in model.backbone.parameters():
        p.grad = None  # no gradient: the optimizer skips the tensor, momentum and all
    frozen_at = [p.detach().clone() for p in model.backbone.parameters()]
    head_at_freeze = model.head.weight.detach().clone()
    for _ in range(STEPS):
        step(model, opt, x, y)
    return describe(model, frozen_at, head_at_freeze)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# A forum user froze a layer with `requires_grad = False`, printed its weights before and
# after training, and found them slightly changed; their own answer is the one above: the
# freezing function must also set `param.grad = None` ("Why there is still a small change in
# frozen layer parameters?"). In facebookresearch/moco#14 the answer points out the other
# half of the mechanism: `torch.optim.SGD` does not apply weight decay to parameters that
# have no gradient, so only a `None` gradient really exempts a tensor. Swift for TensorFlow
# had the same report for momentum with zero gradients (tensorflow/swift-apis#421). The
# default of `Optimizer.zero_grad` changed to `set_to_none=True` in 2.0
# (pytorch/pytorch#92731), which is why the plain loop stopped showing it; the explicit
# `set_to_none=False` used here behaves the same on every release.

# %% [markdown]
# ## How the harness checks it
# A backbone that changes although a freezing line ran can also come from a misspelled
# `p.require_grad = False` (`requires-grad-typo`): there the backbone never stopped requiring
# grad and received fresh gradients at every step. The symptom asks for `requires_grad` to be
# `False` and for the gradients to be zero tensors, so it refuses that case.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The backbone no longer requires grad, its .grad tensors are allocated and all zero, and
    every backbone tensor still changed after the freeze."""
    if run.error is not None:
        return False
    v = run.value
    return not any(v["requires_grad"]) and all(v["grad_is_zero_tensor"]) and all(v["moved_since_freeze"])


def near_miss(device):
    model, x, y = setup(device)
    for p in model.backbone.parameters():
        p.require_grad = False  # misspelled: nothing is frozen
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    frozen_at = [p.detach().clone() for p in model.backbone.parameters()]
    head_at_freeze = model.head.weight.detach().clone()
    for _ in range(STEPS):
        step(model, opt, x, y)
    return describe(model, frozen_at, head_at_freeze)


def check(run, device):
    """The backbone ends where an independent run of the warm-up alone leaves it
    (the same model, optimizer and steps, stopped at the freeze), its gradients are gone, and
    the head kept training."""
    model, x, y = setup(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR, momentum=MOMENTUM)
    for _ in range(WARMUP):
        step(model, opt, x, y)
    v = run.value
    for got, expected in zip(v["backbone"], model.backbone.parameters()):
        torch.testing.assert_close(got, expected.detach(), msg="the frozen backbone moved after the freeze")
    assert all(v["grad_is_none"]) and v["head_moved"], v


def stable(value):
    """Keep the flags; the backbone's floats vary in their last digits between releases."""
    return {
        k: value[k]
        for k in ("requires_grad", "grad_is_zero_tensor", "grad_is_none", "moved_since_freeze", "head_moved")
    }


CASE = Case(
    id="frozen-params-keep-moving",
    title="Frozen halfway through training, and still moving",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Weights frozen mid-training keep changing: momentum still steps their zeroed gradients.",
    # torch.optim skips exactly the parameters whose .grad is None, on every release; the code
    # here zeroes explicitly with set_to_none=False, so the 2.0 change of zero_grad's default
    # (pytorch/pytorch#92731) does not change the outcome.
    affects=(Affects("*", reason="optimizers skip only parameters whose .grad is None, on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch Forums: Why there is still a small change in frozen layer parameters?",
            url="https://discuss.pytorch.org/t/why-there-is-still-a-small-change-in-frozen-layer-parameters/153740",
        ),
        Source(
            title="facebookresearch/moco#14: question regarding the weight decay "
            "(SGD does not decay parameters that have no gradient)",
            url="https://github.com/facebookresearch/moco/issues/14",
        ),
    ),
    tags=("training", "optimizer", "momentum", "freezing", "zero_grad"),
    references=(
        "https://github.com/pytorch/pytorch/pull/92731",  # 2.0: zero_grad sets grads to None by default
        "https://docs.pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
        "https://github.com/tensorflow/swift-apis/issues/421",  # the same with momentum in S4TF
    ),
)
