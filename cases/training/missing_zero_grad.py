# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # The training loop without `zero_grad()`
#
# The loss goes down for a few steps, then oscillates or "suddenly explodes". Each step
# looks right: forward, `loss.backward()`, `optimizer.step()`. But nothing ever clears the
# gradients, so every step applies the sum of all gradients computed so far, and the steps
# grow with the iteration count.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# One weight `w = 1`, three batches whose losses are `w * 1`, `w * 2`, `w * 3` (gradients
# 1, 2, 3), plain SGD with learning rate 1/8. The loop has no `zero_grad()`.

# %%
BATCHES = [1.0, 2.0, 3.0]
LR = 0.125


def broken(device):
    w = torch.tensor([1.0], device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    for x in BATCHES:
        loss = (w * x).sum()
        loss.backward()  # adds to w.grad
        opt.step()
    return {"weight": w.detach().clone(), "last_grad": w.grad.clone()}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `backward()` does not *set* `.grad`, it *adds* to it: a leaf used in several places, or in
# several backward passes, gets the sum of all contributions. That is deliberate (it is how
# gradients of a shared weight combine, and how gradient accumulation over micro-batches
# works), so clearing is the loop's job. Without it, step k uses g1 + ... + gk: here the steps
# are 1, 3 and 6 times the learning rate instead of 1, 2 and 3, the weight ends at -0.25
# instead of 0.25, and on a real model the growing steps overshoot until the loss blows up.
#
# ## The fix
# Clear the gradients once per optimizer step, before the backward of that step:
# `optimizer.zero_grad()` (or `model.zero_grad()`). Since torch 2.0 (pytorch/pytorch#92731)
# it sets them to `None` rather than to zero tensors by default, which saves memory; an
# optimizer then skips a parameter that received no new gradient instead of stepping it with
# zeros. The final weight, `1 - LR * (1 + 2 + 3) = 0.25`, is checked by hand.


# %%
def fixed(device):
    w = torch.tensor([1.0], device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    for x in BATCHES:
        opt.zero_grad()
        loss = (w * x).sum()
        loss.backward()
        opt.step()
    return {"weight": w.detach().clone(), "last_grad": w.grad.clone()}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Both source posts. The debugging notes list "the loss suddenly explodes" among their
# troubleshooting entries: PyTorch does not clear gradients on `backward()`, which accumulates by
# default, so each iteration must run `zero_grad`, then the forward, the backward and the step, in
# that order. The Zhihu post's section on gradient accumulation prints a leaf's gradient after
# repeated `backward()` calls, shows it growing until `opt.zero_grad()`, and points out that the
# same accumulation is what makes large effective batches possible (see
# `grad-accumulation-unscaled` for that use done wrong). The `Optimizer.zero_grad` documentation
# describes the `set_to_none` behaviour.

# %% [markdown]
# ## How the harness checks it
#
# A gradient of 6 alone is not this pitfall. Accumulating the three batches on purpose (one
# `zero_grad()`, three `backward()`, one `step()`) but forgetting to divide the loss by the
# number of micro-batches also ends with a gradient of 6, after a single step (that is
# `grad-accumulation-unscaled`): the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1, S2


def symptom(run):
    """Every step used the running sum of the gradients so far (1, 3, 6): the last gradient is 6
    and the weight took steps of 1 + 3 + 6 learning rates, ending at 1 - 10·LR = -0.25."""
    if run.error is not None or run.value["last_grad"] is None:
        return False
    running = [sum(BATCHES[: k + 1]) for k in range(len(BATCHES))]  # 1, 3, 6
    weight, last_grad = run.value["weight"].item(), run.value["last_grad"].item()
    return last_grad == running[-1] and abs(weight - (1.0 - LR * sum(running))) < 1e-6


def near_miss(device):
    w = torch.tensor([1.0], device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    opt.zero_grad()
    for x in BATCHES:
        (w * x).sum().backward()  # meant as micro-batches of one step
    opt.step()  # one step with the sum 1 + 2 + 3 = 6
    return {"weight": w.detach().clone(), "last_grad": w.grad.clone()}


def check(run, device):
    """The weight is 1 - LR·(1 + 2 + 3) = 0.25 and the last gradient is the last batch's own 3,
    both written out by hand from the loss w·x."""
    torch.testing.assert_close(run.value["weight"], torch.tensor([1.0 - LR * sum(BATCHES)], device=device))
    torch.testing.assert_close(run.value["last_grad"], torch.tensor([BATCHES[-1]], device=device))


CASE = Case(
    id="missing-zero-grad",
    title="The training loop without zero_grad()",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The loss goes down for a few steps, then oscillates or explodes: gradients pile up.",
    # backward() has accumulated into .grad since the first releases, by design (it is what
    # makes gradient accumulation possible). Observed on 2.13.0; no release changed it.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("troubleshooting list: the loss suddenly explodes; zero_grad, forward, backward, step"),
        S2.at("section '进行梯度累积' (gradient accumulation): grads add up until opt.zero_grad()"),
    ),
    tags=("autograd", "optimizer", "zero_grad", "training_loop"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.optim.Optimizer.zero_grad.html",
        "https://github.com/pytorch/pytorch/pull/92731",  # 2.0: zero_grad sets grads to None by default
    ),
)
