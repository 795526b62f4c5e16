# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `.backward()` on a tensor with more than one element
#
# Your loss is computed per sample — `reduction="none"`, or a hand-written loss that forgot its
# final `.mean()`, or a loss that `nn.DataParallel` gathered as one value per GPU — and
# `loss.backward()` stops with `RuntimeError: grad can be implicitly created only for scalar
# outputs`. The forward pass was fine; backward does not know what to differentiate.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A per-element loss `x²` over three values, back-propagated as it is.


# %%
def broken(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    per_sample = x**2  # three losses, not one
    per_sample.backward()
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Reverse-mode autograd computes a vector–Jacobian product: starting from a gradient for the
# output, it pushes it back through every node. For a scalar loss the starting gradient is
# obviously 1 (d loss / d loss), and `backward()` fills it in. For an output with n elements it
# would need n numbers — how much each element matters to whatever you are minimising — and
# there is no right default: summing and averaging give different gradients. So autograd
# refuses to guess. (A tensor with exactly one element, of any shape, is accepted.)
#
# ## The fix
# Say what you are minimising. Either reduce to a scalar first (`per_sample.mean()`, or `.sum()`),
# or pass the starting gradient yourself: `per_sample.backward(gradient=v)` back-propagates
# Σ vᵢ·per_sampleᵢ, so `torch.ones_like(per_sample)` is the same as `.sum()`. Here d(xᵢ²)/dxᵢ =
# 2xᵢ, so the mean gives 2x/3 and the all-ones gradient gives 2x.


# %%
def fixed(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    (x**2).mean().backward()  # reduce to one number first

    x2 = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    per_sample = x2**2
    per_sample.backward(gradient=torch.ones_like(per_sample))  # the weights, said explicitly
    return x.grad, x2.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, in their autograd section, remark that backward only works from a result that
# is a single number, and call that reasonable: a graph needs one end to start from.
#
# The check is old. In the 0.1 series `Variable.backward` raised "backward should be called only
# on a scalar (i.e. 1-element tensor) or with gradient w.r.t. the variable"; by 0.3 the check sat
# in `torch.autograd._make_grads` with today's message ("grad can be implicitly created only for
# scalar outputs", seen in user tracebacks through `torch/autograd/variable.py` and on 2.13.0
# here). The `Tensor.backward` documentation states that a non-scalar tensor that requires grad
# needs `gradient`; the forum answer cited above gives the two fixes used here. User reports of
# this error after wrapping a model in `nn.DataParallel` come from its gathering one loss per GPU
# into a vector: reduce it with `.mean()`.

# %% [markdown]
# ## How the harness checks it
#
# Not every `RuntimeError` from `backward()` on a loss is about its shape. A scalar loss computed
# under `torch.no_grad()` (say, by validation code reused for training) has no graph at all, and
# backward fails with another message; reducing it changes nothing there.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """backward() refused: RuntimeError saying an implicit gradient needs a scalar."""
    return run.raised(RuntimeError, r"only (for|on a) scalar")


def near_miss(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    with torch.no_grad():
        loss = (x**2).mean()  # a scalar, but nothing was recorded
    loss.backward()
    return x.grad


def check(run, device):
    """The two gradients are 2x/3 (mean) and 2x (all-ones weights), written out by hand for
    x = [1, 2, 3]."""
    mean_grad, weighted_grad = run.value
    torch.testing.assert_close(mean_grad, torch.tensor([2.0, 4.0, 6.0], device=device) / 3)
    torch.testing.assert_close(weighted_grad, torch.tensor([2.0, 4.0, 6.0], device=device))


CASE = Case(
    id="backward-non-scalar",
    title=".backward() on a tensor with more than one element",
    kind="error",
    symptom_category="error",
    symptom_line="loss.backward() raises: grad can be implicitly created only for scalar outputs.",
    # A RuntimeError from the first releases on, so no lower bound: 0.1.x's Variable.backward said
    # "backward should be called only on a scalar (i.e. 1-element tensor) or with gradient w.r.t.
    # the variable"; 0.3.x tracebacks (torch/autograd/variable.py) and 2.13.0 (observed here) say
    # "grad can be implicitly created only for scalar outputs". Upper end open.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Autograd': only a single-element result can be back-propagated"),),
    tags=("autograd", "backward", "reduction"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.backward.html",  # gradient=
        "https://pytorch.org/docs/0.4.0/autograd",  # torch.autograd.backward and grad_tensors
        "https://discuss.pytorch.org/t/grad-can-be-implicitly-created-only-for-scalar-outputs/116234/2",
        # a 0.3-era traceback (torch/autograd/variable.py -> _make_grads) with today's message
        "https://github.com/dillondavis/RecurrentAttentionConvolutionalNeuralNetwork/issues/4",
        "https://github.com/muzairkhattak/PromptSRC/issues/6",  # the error after going multi-GPU
    ),
)
