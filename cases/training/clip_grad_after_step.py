# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Gradient clipping after `optimizer.step()` clips nothing that matters
#
# You added `clip_grad_norm_` to tame the occasional loss spike, and the logged gradient norm
# after clipping is exactly the limit you set, so clipping seems to work. The spikes stay. The
# clipping call sits after `optimizer.step()`: the update has already been made with the full
# gradient, and the clipped gradient is thrown away by the next `zero_grad()`.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A linear layer with its weight at zero, an input whose gradient is `[3, 4]` (norm 5), a
# clipping limit of 1 and SGD with learning rate 0.1. One training step with the clipping
# call placed after the step.

# %%
MAX_NORM, LR = 1.0, 0.1
X = [[3.0, 4.0]]


def one_step(device, clip_before_step):
    with seeded(0):  # construction draws from the global RNG (the weight is then zeroed)
        model = nn.Linear(2, 1, bias=False).to(device)
    with torch.no_grad():
        model.weight.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    opt.zero_grad()
    model(torch.tensor(X, device=device)).sum().backward()  # d/dw = x = [3, 4]
    if clip_before_step:
        nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
    opt.step()
    if not clip_before_step:
        nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)  # too late: the step is done
    return {"weight": model.weight.detach().clone(), "grad": model.weight.grad.clone()}


def broken(device):
    return one_step(device, clip_before_step=False)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `clip_grad_norm_` rescales the `.grad` tensors in place, and `optimizer.step()` reads
# whatever is in `.grad` at the moment it runs. Called after the step, clipping changes a
# gradient nobody will use again: the weight moved by `-0.1 * [3, 4] = [-0.3, -0.4]`, five
# times the clipped step. What makes it easy to miss is that everything downstream of the
# call looks clipped: `.grad` now has norm 1, and a gradient norm logged after the call
# shows the limit.
#
# ## The fix
# The order is `zero_grad()`, `backward()`, clip, `step()`. With a `GradScaler` (mixed
# precision), call `scaler.unscale_(optimizer)` before clipping, so the limit applies to the
# true gradients, then `scaler.step(optimizer)`.


# %%
def fixed(device):
    return one_step(device, clip_before_step=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The misplaced call turns up in published training code and gets reported as a bug:
# VGraphRNN/VGRNN#4 (the clipping call comes after `opt.step()`, so it has no effect),
# jongwook/onsets-and-frames#24 (the author agrees it belongs between `backward()` and
# `step()`), and awslabs/graphstorm#1366, where a `--max-grad-norm` option had no effect in
# every trainer for the same reason. The `clip_grad_norm_` documentation says the gradients
# are modified in place, which is why the position matters; the AMP examples in the docs show
# where clipping goes with a `GradScaler`. No release changed this.

# %% [markdown]
# ## How the harness checks it
# The symptom is the pair: a weight moved by the full, unclipped gradient, and a `.grad` that
# was nonetheless clipped to norm 1. Forgetting the clipping call altogether also moves the
# weight by the full gradient, but leaves `.grad` at norm 5; that is a missing call, not a
# misplaced one, and the symptom refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The weight moved by -LR * [3, 4] (the unclipped gradient), while `.grad` ends clipped to
    norm MAX_NORM."""
    if run.error is not None:
        return False
    weight, grad = run.value["weight"].cpu(), run.value["grad"].cpu()
    unclipped_step = torch.tensor(X) * -LR
    return torch.allclose(weight, unclipped_step) and abs(grad.norm().item() - MAX_NORM) < 1e-4


def near_miss(device):
    with seeded(0):  # construction draws from the global RNG (the weight is then zeroed)
        model = nn.Linear(2, 1, bias=False).to(device)
    with torch.no_grad():
        model.weight.zero_()
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    opt.zero_grad()
    model(torch.tensor(X, device=device)).sum().backward()
    opt.step()  # no clipping at all
    return {"weight": model.weight.detach().clone(), "grad": model.weight.grad.clone()}


def check(run, device):
    """By hand: the gradient [3, 4] has norm 5; clipped to norm 1 it is [0.6, 0.8] (times
    5 / (5 + 1e-6), the guard `clip_grad_norm_` adds), so the weight is -0.1 times that."""
    scale = MAX_NORM / (5.0 + 1e-6)
    clipped = torch.tensor([[3.0 * scale, 4.0 * scale]], device=device)
    torch.testing.assert_close(run.value["grad"], clipped)
    torch.testing.assert_close(run.value["weight"], -LR * clipped)


CASE = Case(
    id="clip-grad-after-step",
    title="Gradient clipping after optimizer.step() clips nothing that matters",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Gradient clipping is on and the logged norm is clipped, yet the update used the full gradient.",
    # Order of two calls in user code; clip_grad_norm_ has modified .grad in place since it exists.
    affects=(Affects("*", reason="the step reads .grad when it runs; clipping later cannot change it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="VGraphRNN/VGRNN#4: Incorrect use of torch.nn.utils.clip_grad_norm",
            url="https://github.com/VGraphRNN/VGRNN/issues/4",
        ),
        Source(
            title="jongwook/onsets-and-frames#24: Gradient clipping in the wrong place?",
            url="https://github.com/jongwook/onsets-and-frames/issues/24",
        ),
        Source(
            title="awslabs/graphstorm#1366: possible max_grad_norm implementation error",
            url="https://github.com/awslabs/graphstorm/issues/1366",
        ),
    ),
    tags=("optimizer", "gradient_clipping", "training_loop"),
    references=(
        "https://pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html",
        "https://pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping",
    ),
)
