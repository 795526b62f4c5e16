# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A custom `autograd.Function` whose backward returns too few gradients
#
# You write a `torch.autograd.Function` whose `forward` takes a tensor, a learnable weight and a
# plain Python number (an `eps`, a momentum, a training flag). The forward runs; `backward`
# returns the two gradients that exist — and `loss.backward()` stops with `RuntimeError:
# function ScaleShiftBackward returned an incorrect number of gradients (expected 3, got 2)`.
# The float has no gradient, but it still needs a slot.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# `y = x · w + shift` with a tensor `x`, a learnable scalar `w` and a float `shift`. The
# backward returns d/dx and d/dw, and nothing for `shift`.


# %%
class ScaleShift(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, weight, shift):
        ctx.save_for_backward(x, weight)
        return x * weight + shift

    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight, (grad_out * x).sum()  # no slot for `shift`


def broken(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    weight = torch.tensor(2.0, device=device, requires_grad=True)
    ScaleShift.apply(x, weight, 0.5).sum().backward()
    return x.grad, weight.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Autograd matches the values `backward` returns to the arguments `forward` received by
# *position*: the i-th returned value is the gradient for the i-th input. Every argument counts,
# tensors or not, requiring grad or not, so the engine expects exactly as many values as
# `forward` had inputs (after `ctx`). Returning fewer is ambiguous — which input lost its
# gradient? — so it raises rather than guess. Returning more is accepted only when the extra
# values are all `None`. A non-tensor input must get `None` in its slot; a real tensor there is
# an error too ("returned a gradient different than None at position 3, but the corresponding
# forward input was not a Variable").
#
# ## The fix
# Return one value per `forward` input, `None` where there is no gradient. `ctx.needs_input_grad`
# tells which ones are wanted, so a gradient nobody asked for can be skipped (and `None`
# returned). By hand: y = x·w + shift summed gives d/dx = w everywhere and d/dw = Σ x.


# %%
class ScaleShiftFixed(ScaleShift):  # the same forward; only backward changes
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        grad_x = grad_out * weight if ctx.needs_input_grad[0] else None
        grad_w = (grad_out * x).sum() if ctx.needs_input_grad[1] else None
        return grad_x, grad_w, None  # one slot per forward input; the float gets None


def fixed(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    weight = torch.tensor(2.0, device=device, requires_grad=True)
    ScaleShiftFixed.apply(x, weight, 0.5).sum().backward()
    return x.grad, weight.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes write batch normalisation as an `autograd.Function` (`MyBN_f`) whose forward
# takes eleven arguments — the input, running statistics, weight and bias, but also a training
# flag, a momentum and an eps — and whose backward returns eleven values, `None` for the
# running statistics, the flag and the numbers. Their summary: the values `backward` returns
# correspond to `forward`'s inputs.
#
# The rule is in the documentation of `Function.backward`: return as many values as there were
# inputs to `forward`, with `None` allowed for inputs that are not tensors or do not need a
# gradient. The check lives in the engine's node for Python functions (`PyNode::apply` in
# `torch/csrc/autograd/python_function.cpp` on current main): extra trailing `None`s are dropped,
# and any other count mismatch raises the error above. User reports quote the same message on
# 0.2.0 (1zb/pytorch-image-comp-rnn#4, where the fix was `return grad_output, None`) and later
# releases (huawei-noah/AdderNet#21, 2020); it is unchanged on 2.13.0, observed here.

# %% [markdown]
# ## How the harness checks it
#
# The engine has a second complaint about the same slots, and it is not this one: the count is
# right, but the float's slot holds a tensor instead of `None` (a "gradient" for `shift`). The
# fix for it is the opposite: not another value, but `None` in its place.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """backward() raised RuntimeError: the Function returned the wrong number of gradients."""
    return run.raised(RuntimeError, r"incorrect number of gradients")


class ScaleShiftGradForFloat(ScaleShift):
    @staticmethod
    def backward(ctx, grad_out):
        x, weight = ctx.saved_tensors
        return grad_out * weight, (grad_out * x).sum(), grad_out.sum()  # a tensor for the float


def near_miss(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    weight = torch.tensor(2.0, device=device, requires_grad=True)
    ScaleShiftGradForFloat.apply(x, weight, 0.5).sum().backward()
    return x.grad, weight.grad


def check(run, device):
    """d(Σ x·w + shift)/dx = w = 2 for every element and d/dw = Σ x = 6, written out by hand."""
    grad_x, grad_w = run.value
    torch.testing.assert_close(grad_x, torch.tensor([2.0, 2.0, 2.0], device=device))
    torch.testing.assert_close(grad_w, torch.tensor(6.0, device=device))


CASE = Case(
    id="custom-function-grad-count",
    title="A custom autograd.Function whose backward returns too few gradients",
    kind="error",
    symptom_category="error",
    symptom_line="A custom autograd.Function raises that backward returned an incorrect number of gradients.",
    # The same message is quoted from 0.2.0 (1zb/pytorch-image-comp-rnn#4, December 2017) and
    # observed on 2.13.0 by this corpus; older releases were not looked at. Upper end open.
    affects=(Affects(">=0.2", since="1zb/pytorch-image-comp-rnn#4 quotes the same error on 0.2.0 (December 2017)"),),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Layers': backward returns one value per forward input; MyBN_f gives None to flags"),),
    tags=("autograd", "custom_function"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.autograd.Function.backward.html",
        "https://github.com/1zb/pytorch-image-comp-rnn/issues/4",  # 0.2.0: fixed by adding None
        "https://github.com/huawei-noah/AdderNet/issues/21",  # the same error, 2020
    ),
)
