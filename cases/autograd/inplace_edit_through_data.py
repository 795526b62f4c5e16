# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An in-place edit through `.data` between forward and backward
#
# A weight constraint (a clamp, as in WGAN weight clipping, or a max-norm rescale) is written
# as `layer.weight.data.clamp_(...)` and placed right after the forward pass, before
# `loss.backward()`. Nothing fails. Written under `torch.no_grad()` instead of through
# `.data`, the same clamp would have stopped the run with "one of the variables needed for
# gradient computation has been modified by an inplace operation"; through `.data` autograd
# is not told, and the backward pass silently uses the edited weight. The gradients of every layer *below* it no longer belong to the loss
# that was computed, and training follows them anyway.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Two linear layers with round weights. The output layer's weight `[1.5, -2.0]` is clamped
# to `[-1, 1]` between the forward and the backward pass; the forward used the unclamped one.

# %%
W1 = [[0.5, -0.3], [0.2, 0.8]]
W2 = [[1.5, -2.0]]
X = [[1.0, 2.0], [-1.0, 0.5]]


def network(device):
    with seeded(0):
        layer1, layer2 = nn.Linear(2, 2), nn.Linear(2, 1)
    with torch.no_grad():
        layer1.weight.copy_(torch.tensor(W1))
        layer1.bias.zero_()
        layer2.weight.copy_(torch.tensor(W2))
        layer2.bias.zero_()
    return layer1.to(device), layer2.to(device), torch.tensor(X, device=device)


def broken(device):
    layer1, layer2, x = network(device)
    loss = layer2(torch.tanh(layer1(x))).sum()
    layer2.weight.data.clamp_(-1.0, 1.0)  # constraint applied before backward, through .data
    loss.backward()
    return layer1.weight.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The backward pass of `layer2` needs its weight: the gradient that flows down to `layer1`
# is the upstream gradient times `W2`. Autograd does not copy `W2` when the forward runs; it
# keeps a reference and, to stay correct, records the tensor's *version counter*, which every
# in-place operation increments. At backward time it compares the versions and raises if the
# saved tensor was modified. `.data` defeats that check: it returns a tensor that shares the
# weight's storage but has its own, untracked history, so `clamp_` on it changes the numbers
# without bumping the weight's version. Backward then reads `W2 = [1, -1]` where the forward
# used `[1.5, -2]`, and `layer1.weight.grad` is the gradient of a loss nobody computed. The
# gradient of `layer2.weight` itself is still right (it uses the saved activations, not
# `W2`), which makes the error harder to spot. The PyTorch 0.4 migration guide flagged exactly
# this when it made `.detach()` the safe replacement: changes through `.data` are invisible to
# autograd.
#
# ## The fix
# Apply constraints to the weights after `optimizer.step()`, never between a forward pass and
# its backward pass, and write them as in-place operations under `torch.no_grad()` rather
# than through `.data`: if one is ever misplaced again, autograd raises instead of computing
# wrong gradients.


# %%
def fixed(device):
    layer1, layer2, x = network(device)
    loss = layer2(torch.tanh(layer1(x))).sum()
    loss.backward()
    grad = layer1.weight.grad.clone()
    with torch.no_grad():  # (after optimizer.step() in a training loop)
        layer2.weight.clamp_(-1.0, 1.0)
    return grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The PyTorch 0.4.0 migration guide ("What about .data?") says that `.data` can be unsafe:
# changes made through it are not tracked by autograd, and the computed gradients are wrong
# if the tensor is needed in the backward pass, whereas in-place changes through
# `x.detach()` are reported. The autograd documentation's "In-place correctness checks"
# explains the version counter that `.data` bypasses. A CSDN post (linked below) shows the
# effect on a single tensor: after `x.data *= 100` the gradient of `x * x` comes out as 200
# with no error, and the same edit through `.detach()` raises. pytorch/pytorch#33874, which
# removes `.data` from the distributed tests, calls `.data` unsafe, and its review rewrites
# an in-place update as `with torch.no_grad(): param -= param.grad`.
# `.data` has worked this way since the 0.4.0 merge of `Variable` and `Tensor`; observed on
# 2.13.0.

# %% [markdown]
# ## How the harness checks it
# The same clamp without `.data`, under `torch.no_grad()` but still before `backward()`, does
# not compute anything wrong: autograd sees the new version of the weight and raises
# `RuntimeError: ... modified by an inplace operation`. That is the guarded form of the same
# mistake (see `inplace-on-saved-tensor`); the symptom is a gradient silently computed with
# the edited weight, so an exception is not claimed.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def layer1_grad_by_hand(w2, device):
    """d/dW1 of sum_n w2 . tanh(W1 x_n): sum over samples of (w2 * (1 - h_n^2)) outer x_n."""
    w1 = torch.tensor(W1, device=device, dtype=torch.float64)
    x = torch.tensor(X, device=device, dtype=torch.float64)
    h = torch.tanh(x @ w1.T)
    upstream = torch.tensor(w2, device=device, dtype=torch.float64) * (1 - h**2)
    return (upstream.T @ x).float()


def symptom(run):
    """layer1's gradient is the one computed with the clamped W2 = [1, -1], not with the
    W2 = [1.5, -2] that produced the loss."""
    if run.error is not None or not isinstance(run.value, torch.Tensor):
        return False
    device = run.value.device
    with_clamped = layer1_grad_by_hand([[1.0, -1.0]], device)
    with_forward = layer1_grad_by_hand(W2, device)
    return bool(torch.allclose(run.value, with_clamped) and not torch.allclose(run.value, with_forward))


def near_miss(device):
    layer1, layer2, x = network(device)
    loss = layer2(torch.tanh(layer1(x))).sum()
    with torch.no_grad():
        layer2.weight.clamp_(-1.0, 1.0)  # tracked in-place edit: backward raises
    loss.backward()
    return layer1.weight.grad


def check(run, device):
    """layer1's gradient equals the derivative of the loss that was computed, worked out by
    hand in float64 with the forward's W2 = [1.5, -2]."""
    torch.testing.assert_close(run.value, layer1_grad_by_hand(W2, device))


CASE = Case(
    id="inplace-edit-through-data",
    title="An in-place edit through .data between forward and backward",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Lower layers get silently wrong gradients: a weight was edited through .data before backward.",
    # .data has bypassed the version counter since Variable and Tensor merged in 0.4.0 (the
    # migration guide documents it); no release changed it.
    affects=(Affects("*", reason=".data is untracked by autograd on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch 0.4.0 Migration Guide: What about .data?",
            url="https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",
        ),
        Source(
            title="PyTorch docs: Automatic differentiation package, In-place correctness checks",
            url="https://docs.pytorch.org/docs/stable/autograd.html#in-place-correctness-checks",
        ),
        Source(
            title="pytorch/pytorch#33874: remove .data from test/distributed/ ('.data calls are unsafe')",
            url="https://github.com/pytorch/pytorch/pull/33874",
        ),
    ),
    tags=("autograd", "inplace", "data_attribute", "version_counter"),
    references=(
        "https://blog.csdn.net/qq_29931565/article/details/126839404",  # x.data *= 100: grad 200, no error
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html",
    ),
)
