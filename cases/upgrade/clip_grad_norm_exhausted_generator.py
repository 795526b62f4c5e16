# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `clip_grad_norm_` on a used-up `parameters()` generator clips nothing
#
# A training script keeps `params = model.parameters()`, hands it to the optimizer, and later
# clips with `clip_grad_norm_(params, max_norm)`. `parameters()` is a generator: the optimizer
# consumed it, so the clip sees no tensors, returns a total norm of 0 and leaves every gradient
# as it was. On 1.13 to 2.7 that is silent, and the model trains unclipped. After an upgrade to
# 2.8 the same line prints ``UserWarning: `parameters` is an empty generator, no gradient
# clipping will occur.``: the bug was always there, the upgrade makes it speak.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code


# %%
def _model_with_grads(device):
    with seeded(0):
        model = nn.Linear(2, 2).to(device)
    x = torch.tensor([[3.0, 4.0]], device=device)
    return model, x


def broken(device):
    model, x = _model_with_grads(device)
    params = model.parameters()  # a generator
    torch.optim.SGD(params, lr=0.1)  # the optimizer iterates it to the end
    model(x).sum().backward()
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)  # sees nothing
    after = torch.cat([p.grad.flatten() for p in model.parameters()]).norm()
    return {"total_norm": float(total), "norm_after": float(after)}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `clip_grad_norm_` takes any iterable of tensors and turns it into a list; a generator that
# was already iterated gives an empty list, whose norm is 0, so nothing is scaled.
# pytorch/pytorch#148259 asked for a warning in exactly this case, and pytorch/pytorch#151529
# added one for 2.8: when the argument is a generator and turns out empty, it warns. The
# arithmetic did not change; the warning is the only difference between the releases.
#
# ## The fix
# Ask the model again at the point of use, `clip_grad_norm_(model.parameters(), ...)`, or keep
# the parameters in a list (`params = list(model.parameters())`) so they can be iterated more
# than once. The check recomputes the norm by hand: the gradient of `sum(W x + b)` is `x` in
# each row of `W` and 1 for each bias, so the total norm is sqrt(2 * (9 + 16) + 2) = sqrt(52).


# %%
def fixed(device):
    model, x = _model_with_grads(device)
    params = list(model.parameters())  # a list can be iterated again
    torch.optim.SGD(params, lr=0.1)
    model(x).sum().backward()
    total = nn.utils.clip_grad_norm_(params, max_norm=1.0)
    after = torch.cat([p.grad.flatten() for p in model.parameters()]).norm()
    return {"total_norm": float(total), "norm_after": float(after)}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#148259 ("Raise a warning when `torch.nn.utils.clip_grad_norm_` receives an
# exhausted generator", March 2025) described this silent no-op; pytorch/pytorch#151529 ("Add
# hint message when parameters is empty in clip_grad_norm_") added the warning, first shipped
# in 2.8.0, where `python -m torch_pitfalls.surface diff` lists it as new in `nn.utils.clip_grad`.
# The same trap sat in torchtitan's own `clip_grad_norm_` helper, which silently left gradients
# unchanged when given `model.parameters()` (pytorch/torchtitan#1258). Observed with this
# project's venvs: no warning on 1.13.1 and 2.7.1 (and no clipping either), the `UserWarning`
# on 2.8.0, 2.9.1, 2.10.0, 2.13.0, 2.14.1 and 2.15.0. The check rejects the broken result on every release, since
# the gradients are never clipped; only from 2.8 does torch say so.

# %% [markdown]
# ## How the harness checks it
#
# `clip_grad_norm_` has another `UserWarning` on a different path: the old name without the
# underscore, `clip_grad_norm`, warns that it is deprecated (a `FutureWarning` from 2.4). Here
# the parameters are a list with gradients; only the spelling is old.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The warning that the generator was empty."""
    return run.warned(UserWarning, r"empty generator, no gradient clipping")


def near_miss(device):
    model, x = _model_with_grads(device)
    model(x).sum().backward()
    return float(nn.utils.clip_grad_norm(list(model.parameters()), max_norm=1.0))


def check(run, device):
    """The norm before clipping is sqrt(52) worked out by hand, and after clipping the
    gradients have norm 1 (max_norm): the used-up generator reports 0 and leaves them at
    sqrt(52)."""
    expected_total = 52.0**0.5
    assert abs(run.value["total_norm"] - expected_total) < 1e-4, run.value
    assert abs(run.value["norm_after"] - 1.0) < 1e-4, f"gradients not clipped: {run.value}"


CASE = Case(
    id="clip-grad-norm-exhausted-generator",
    title="clip_grad_norm_ on a used-up parameters() generator clips nothing",
    kind="warning",
    symptom_category="wrong-values",
    symptom_line="clip_grad_norm_ returns 0 and clips nothing: the parameters() generator was used up.",
    affects=(
        Affects(
            versions=">=2.8",
            reason="clip_grad_norm_ warns when handed an empty generator (observed 2.8.0 to 2.15.0); "
            "before, it returned 0 and clipped nothing without a word (observed 1.13.1 to 2.7.1)",
            issue="https://github.com/pytorch/pytorch/pull/151529",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.8.0").at(
            "the release that first ships pytorch/pytorch#151529, the empty-generator warning of clip_grad_norm_"
        ),
    ),
    tags=("upgrade", "gradient_clipping", "generator"),
    references=(
        "https://github.com/pytorch/pytorch/issues/148259",  # request: warn on an exhausted generator
        "https://github.com/pytorch/pytorch/pull/151529",  # the warning
        "https://github.com/pytorch/torchtitan/pull/1258",  # downstream: torchtitan's clip helper, same silent no-op
    ),
)
