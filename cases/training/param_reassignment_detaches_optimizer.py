# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A parameter replaced after the optimizer was built
#
# You build the optimizer, then set a layer's weight to a value of your own, say
# `bn.weight = nn.Parameter(torch.full(...))`. Training runs, the loss is computed with the
# new weight, `bn.weight.grad` is filled in, and yet `bn.weight` never changes: step after
# step it keeps exactly the value you assigned. (Assigning a plain tensor instead is refused
# at once with a `TypeError`, so the `nn.Parameter` wrapper is what makes the line "work".)

# %%
import math

import torch
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A one-channel `BatchNorm1d` on the batch `[[-1], [1]]`, whose normalised values are
# `[-1, 1]` (up to `eps`). The loss is the second output, so the gradient of the weight is the
# second normalised value. The optimizer is built first, then the weight is replaced by 2.

# %%
LR = 0.5


def batch(device):
    return torch.tensor([[-1.0], [1.0]], device=device)


def train_one_step(bn, opt, device):
    opt.zero_grad()
    loss = bn(batch(device))[1, 0]  # = weight * x̂₁ + bias
    loss.backward()
    opt.step()


def seen(bn, opt):
    """The weight after training, its gradient, and which Parameter objects the optimizer holds."""
    held = [p for group in opt.param_groups for p in group["params"]]
    return {
        "weight": bn.weight.detach().clone(),
        "grad": None if bn.weight.grad is None else bn.weight.grad.clone(),
        "optimizer_has_weight": any(p is bn.weight for p in held),
        "stale_in_optimizer": sum(not any(p is q for q in bn.parameters()) for p in held),
    }


def broken(device):
    bn = nn.BatchNorm1d(1).to(device)
    opt = torch.optim.SGD(bn.parameters(), lr=LR)
    bn.weight = nn.Parameter(torch.full((1,), 2.0, device=device))  # a new object
    train_one_step(bn, opt, device)
    return seen(bn, opt)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    bn = nn.BatchNorm1d(1)
    try:
        bn.weight = torch.ones(1)  # a plain tensor is refused outright
    except TypeError as exc:
        print("TypeError:", exc)

# %% [markdown]
# ## Why
# `torch.optim.SGD(bn.parameters())` stores the Parameter *objects* it is given in
# `opt.param_groups`. `bn.weight = nn.Parameter(...)` does not change that object: through
# `Module.__setattr__` it registers a different object under the name `weight`. From then on
# the forward pass uses (and `backward()` fills the `.grad` of) the new Parameter, while
# `opt.step()` walks its own list: the old Parameter, which no longer takes part in the
# forward and gets no gradient, so SGD skips it. Nothing connects the two; neither warns.
# S1 met it in exactly this form, on `bn.weight`. The same happens when a whole layer is
# swapped after the optimizer was built (`model.fc = nn.Linear(...)`, replacing BatchNorm by
# GroupNorm) — and, with `torch.__future__.set_overwrite_module_params_on_conversion(True)`,
# after `model.to(...)`, which then creates new Parameters.
#
# ## The fix
# Change the value *in place*, keeping the object the optimizer holds:
# `with torch.no_grad(): bn.weight.copy_(...)` (or `nn.init.constant_`, `fill_`). Where a
# layer really must be replaced, build (or rebuild) the optimizer after the replacement.


# %%
def fixed(device):
    bn = nn.BatchNorm1d(1).to(device)
    opt = torch.optim.SGD(bn.parameters(), lr=LR)
    with torch.no_grad():
        bn.weight.copy_(torch.full((1,), 2.0, device=device))  # same object, new value
    train_one_step(bn, opt, device)
    return seen(bn, opt)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# In S1's troubleshooting list the author notices that an in-place change and an assignment
# to `bn.weight` behave very differently, and works out why: the assignment points the layer
# at a new tensor while the optimizer still holds the original, so the new weight is never
# updated; the note calls it a pitfall met again and again.
#
# Upstream, pytorch/pytorch#14467 (2018, still open) asks for the optimizer to warn when the
# model's parameters no longer match the ones it was given; #54765 gets the maintainers' answer
# that a changed network needs a re-created optimizer; #7844 discusses the related advice to move
# a model to the GPU before building its optimizer (`.cuda()` keeps the Parameter objects, but
# that is not true of every conversion). Assigning a plain tensor to a registered parameter name
# raises `TypeError: cannot assign 'torch.FloatTensor' as parameter 'weight' (torch.nn.Parameter
# or None expected)` (#44022 shows it on 1.2; the same text on 2.13.0).

# %% [markdown]
# ## How the harness checks it
#
# A weight that has a gradient and did not move is not always this pitfall. Calling
# `opt.step()` before `loss.backward()` (the step finds no gradient yet, the backward fills it
# afterwards) leaves the same picture after one step, with the optimizer holding the right
# object: the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The weight got a gradient but kept the assigned value, and the optimizer holds a stale
    Parameter in its place: the step went to the old object."""
    if run.error is not None or run.value["grad"] is None:
        return False
    v = run.value
    return bool(
        (v["grad"] != 0).all()
        and (v["weight"] == 2.0).all()
        and not v["optimizer_has_weight"]
        and v["stale_in_optimizer"] == 1
    )


def near_miss(device):
    bn = nn.BatchNorm1d(1).to(device)
    opt = torch.optim.SGD(bn.parameters(), lr=LR)
    with torch.no_grad():
        bn.weight.copy_(torch.full((1,), 2.0, device=device))
    opt.zero_grad()
    loss = bn(batch(device))[1, 0]
    opt.step()  # too early: no gradient yet, so nothing moves
    loss.backward()
    return seen(bn, opt)


def check(run, device):
    """One SGD step from 2, by hand: the batch has mean 0 and biased variance 1, so
    d(loss)/d(weight) = x̂₁ = 1/sqrt(1 + eps) and the weight is 2 - LR · x̂₁."""
    x_hat = 1.0 / math.sqrt(1.0 + nn.BatchNorm1d(1).eps)
    torch.testing.assert_close(run.value["weight"], torch.tensor([2.0 - LR * x_hat], device=device))
    torch.testing.assert_close(run.value["grad"], torch.tensor([x_hat], device=device))
    assert run.value["optimizer_has_weight"] and run.value["stale_in_optimizer"] == 0, run.value


CASE = Case(
    id="param-reassignment-detaches-optimizer",
    title="A parameter replaced after the optimizer was built",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A parameter replaced after the optimizer was built gets a gradient but never changes.",
    # An optimizer keeps references to the Parameter objects it was given, and assigning a new
    # Parameter rebinds the module attribute: true of torch.optim from its start, so no known
    # lower bound. The request for a warning (#14467, 2018) is still open. The matrix observes
    # it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S1.at("the troubleshooting list: in-place change vs assignment of bn.weight"),),
    tags=("training", "optimizer", "parameters", "inplace"),
    references=(
        "https://github.com/pytorch/pytorch/issues/14467",  # feature request: warn when the params "change"
        "https://github.com/pytorch/pytorch/issues/7844",  # .cuda() before the optimizer; why order matters
        "https://github.com/pytorch/pytorch/issues/54765",  # a replaced network needs a new optimizer
        "https://github.com/pytorch/pytorch/issues/44022",  # the TypeError for a plain tensor
    ),
)
