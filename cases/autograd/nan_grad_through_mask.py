# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # NaN gradient through a mask
#
# You divide by a tensor that contains zeros, mask the infinities away with `y[mask]` or
# `torch.where`, and the loss is a perfectly finite number. Then `loss.backward()` fills the
# input's `.grad` with `nan` exactly where the masked-out division happened, and one step of
# the optimizer spreads it through the whole model.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two numerators, one of them over a zero denominator. Only the safe element is kept.


# %%
def broken(device):
    x = torch.tensor([1.0, 1.0], device=device, requires_grad=True)
    den = torch.tensor([0.0, 1.0], device=device)
    y = x / den  # [inf, 1.]
    loss = y[den != 0].sum()  # the inf is masked out: loss == 1.0, finite
    loss.backward()
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Masking happens *after* the division, so autograd differentiates the division for every
# element, the masked one included. The mask's backward sends a gradient of exactly 0 to the
# masked element, and the division's backward multiplies that 0 by `1/den = inf`.
# In IEEE arithmetic `0 * inf` is `nan`, not 0. The same happens with
# `torch.where(den != 0, x / den, 0)`: `where` routes a zero gradient to the unused branch, and
# that branch's backward still turns it into `nan`. Any function whose forward produced `inf`
# (or whose derivative is infinite, such as `sqrt` or `log` at 0) does this.
#
# ## The fix
# Make the unsafe input harmless *before* the operation (the "double where"): replace the zero
# denominators with something finite, divide, then mask. Every element's backward now sees a
# finite factor, and the masked one gets a true 0.


# %%
def fixed(device):
    x = torch.tensor([1.0, 1.0], device=device, requires_grad=True)
    den = torch.tensor([0.0, 1.0], device=device)
    keep = den != 0
    safe_den = torch.where(keep, den, torch.ones_like(den))
    loss = torch.where(keep, x / safe_den, torch.zeros_like(x)).sum()
    loss.backward()
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (torch 0.3, December 2017) wrote a segmentation loss that divided by a
# distance map containing zeros, masked the result, and found 99.97% of the gradient was NaN;
# its author reported it upstream (pytorch/pytorch#4132). The maintainers' answer there is the
# mechanism above: the indexing backward sends 0, and `0 * inf` is `nan`. The same report
# through `torch.where` is pytorch/pytorch#10729; the MaskedTensor tutorial ("Distinguishing
# between 0 and NaN gradient") lists both as problems that a masked tensor works around.

# %% [markdown]
# ## How the harness checks it
#
# Not every NaN gradient is this pitfall. NaN already in the *input* also gives a NaN gradient
# in that place, through any formula; that is bad data, not the mask, and the symptom must not
# claim it (its kept gradient is 2, not 1/den).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S0


def symptom(run):
    """The masked-out element's gradient (index 0) is NaN while the kept one is still the right
    1/den = 1: the NaN comes from the mask, not from the data."""
    if run.error is not None or not isinstance(run.value, torch.Tensor):
        return False
    return bool(torch.isnan(run.value[0])) and run.value[1].item() == 1.0


def near_miss(device):
    x = torch.tensor([float("nan"), 1.0], device=device, requires_grad=True)
    (x * x).sum().backward()  # grad = 2x = [nan, 2]
    return x.grad


def check(run, device):
    """d(loss)/dx_i is 1/den_i where kept and exactly 0 where masked: [0, 1], written by hand."""
    torch.testing.assert_close(run.value, torch.tensor([0.0, 1.0], device=device))


CASE = Case(
    id="nan-grad-through-mask",
    title="NaN gradient through a mask",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="The loss is finite, but the gradient is NaN where a masked-out division by zero happened.",
    star=True,  # a pitfall the source posts single out
    # From 1.13.1 on the matrix observes it; before that, the source post saw it on torch 0.3.
    # The mechanism is IEEE arithmetic in the backward formula: no release is known to change it.
    affects=(Affects(">=0.3", since="the source post observed it on torch 0.3 (December 2017)"),),
    devices=("cpu", "cuda"),
    sources=(S0.at("the closing bug report: x.grad is NaN after x/0 and a mask"),),
    tags=("autograd", "nan", "mask", "where"),
    references=(
        "https://github.com/pytorch/pytorch/issues/4132",  # the source post's own report
        "https://github.com/pytorch/pytorch/issues/10729",  # the same through torch.where
        "https://docs.pytorch.org/tutorials/beginner/maskedtensor_distinguish_gradient.html",
    ),
)
