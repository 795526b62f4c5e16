# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `optimizer.zero_grad()` leaves `.grad` as `None`, not zeros
#
# A training loop calls `optimizer.zero_grad()` and then adds gradients it got from somewhere
# else into the parameters by hand: a parameter server's averaged gradients, a regulariser's
# analytic gradient, the gradients of a teacher. On 1.13 `zero_grad()` filled every `.grad`
# with zeros, so `p.grad += g` just worked. After the upgrade to 2.0 the same line fails with
# `TypeError: unsupported operand type(s) for +=: 'NoneType' and 'Tensor'`: `zero_grad()` now
# throws the gradient tensors away instead of zeroing them. Code that only reads the gradient
# (`p.grad.norm()` for logging) fails the same way with an `AttributeError`, and code that
# branches on `p.grad is None` silently takes the other branch.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One step of a parameter-server style update: clear the gradients, add the gradient that
# arrived from elsewhere, step.

# %%
RECEIVED = [torch.tensor([[1.0, -2.0]]), torch.tensor([0.5])]  # gradients from elsewhere (weight, bias)
LR = 0.1


def _model_and_optimizer(device):
    with seeded(0):
        model = nn.Linear(2, 1).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    model(torch.ones(1, 2, device=device)).sum().backward()  # an earlier step left gradients behind
    return model, opt


def broken(device):
    model, opt = _model_and_optimizer(device)
    start = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad()  # 1.13: zeros; 2.0: None
    for p, g in zip(model.parameters(), RECEIVED):
        p.grad += g.to(device)  # TypeError on 2.0: p.grad is None
    opt.step()
    return start, [p.detach().clone() for p in model.parameters()]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `zero_grad(set_to_none=True)` (added in 1.7) frees the gradient tensors instead of writing
# zeros into them: less memory, one kernel fewer per parameter, and the next `backward()`
# simply allocates fresh gradients. The optimizers treat a `None` gradient as "no update for
# this parameter". For 2.0, pytorch/pytorch#92656 proposed making it the default, and
# pytorch/pytorch#92731 flipped `set_to_none` to `True` in both `torch.optim.Optimizer.zero_grad`
# and `torch.nn.Module.zero_grad`, as a backwards-incompatible change of the 2.0 release.
# Anything that touches `.grad` between `zero_grad()` and the next `backward()` now meets `None`.
#
# ## The fix
# Say which behaviour the code needs: `opt.zero_grad(set_to_none=False)` keeps zero tensors on
# every release from 1.7 to 2.15, so the manual accumulation works unchanged. (Code that does
# not touch `.grad` before the next `backward()` should keep the new default.) The check redoes
# the SGD step by hand: new parameter = old parameter - lr * received gradient.


# %%
def fixed(device):
    model, opt = _model_and_optimizer(device)
    start = [p.detach().clone() for p in model.parameters()]
    opt.zero_grad(set_to_none=False)
    for p, g in zip(model.parameters(), RECEIVED):
        p.grad += g.to(device)
    opt.step()
    return start, [p.detach().clone() for p in model.parameters()]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes list it among the backwards-incompatible changes: "Gradients
# are now set to `None` instead of zeros by default in `torch.optim.*.zero_grad()` and
# `torch.nn.Module.zero_grad()`" (pytorch/pytorch#92731, from the proposal #92656). It broke
# pytorch/examples' parameter-server example, which accumulated received gradients into
# `.grad` after `zero_grad()` and got this `TypeError` (fixed in pytorch/examples#1172 by
# passing `set_to_none=False`); DREAMPlace pinned `set_to_none=False` in limbo018/DREAMPlace#112
# because its Nesterov optimizer does something else when a gradient is `None`; PyTorch
# Lightning adjusted its own `optimizer_zero_grad` in Lightning-AI/pytorch-lightning#16531.
# Observed here on CPU: the broken code runs and steps on 1.13.1 and raises from 2.0.1 on
# (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1,
# 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and `reproduced` from 2.0.1
# on).

# %% [markdown]
# ## How the harness checks it
#
# A `TypeError` from `+=` on a gradient is not always this change: adding something that is
# not a tensor or a number (a gradient that came back as a string from a JSON message) fails
# with a `TypeError` too, with the tensor on the left.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The in-place add into `.grad` fails because `.grad` is None after zero_grad()."""
    return run.raised(TypeError, r"'NoneType' and 'Tensor'")


def near_miss(device):
    model, opt = _model_and_optimizer(device)
    opt.zero_grad(set_to_none=False)
    model.weight.grad += "0.5"  # TypeError: unsupported operand type(s) for +=: 'Tensor' and 'str'
    return model.weight.grad


def check(run, device):
    """Each parameter moved by exactly -lr times the gradient that was added by hand: the
    gradient left behind by the earlier backward was cleared, and the step happened."""
    assert run.error is None, f"the step raised {run.error!r}"
    start, after = run.value
    for p0, p1, g in zip(start, after, RECEIVED):
        torch.testing.assert_close(p1, p0 - LR * g.to(device))


CASE = Case(
    id="zero-grad-set-to-none",
    title="optimizer.zero_grad() leaves .grad as None, not zeros",
    kind="error",
    symptom_category="wrong-values",
    symptom_line="After zero_grad(), p.grad += g fails: .grad is None, not zeros, from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="zero_grad() defaults to set_to_none=True (observed 2.0.1 to 2.15.0; zeros on 1.13.1)",
            issue="https://github.com/pytorch/pytorch/pull/92731",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Backwards Incompatible changes: Gradients are now set to None instead of zeros by default in "
            "torch.optim.*.zero_grad() and torch.nn.Module.zero_grad()"
        ),
    ),
    tags=("upgrade", "optimizer", "zero_grad", "default_change"),
    references=(
        "https://github.com/pytorch/pytorch/issues/92656",  # proposal: set_to_none=True by default for 2.0
        "https://github.com/pytorch/pytorch/pull/92731",  # the default flipped, in optim and nn
        "https://github.com/pytorch/examples/pull/1172",  # downstream: TypeError accumulating grads
        "https://github.com/limbo018/DREAMPlace/pull/112",  # downstream: logic branching on grad None
        "https://github.com/Lightning-AI/pytorch-lightning/pull/16531",  # downstream: Lightning follows the flip
    ),
)
