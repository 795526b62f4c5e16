# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An in-place write to a tensor that backward still needs
#
# The forward pass runs and prints a sensible loss; then `loss.backward()` stops with
# `RuntimeError: one of the variables needed for gradient computation has been modified by an
# inplace operation: [torch.FloatTensor [2, 3]], which is output 0 of Softmax, is at version
# 1; expected version 0 instead` (torch 2.13.0's wording). The line in the traceback is
# `backward()`, which is not the culprit. Earlier, the forward pass wrote into the output of
# a softmax in place (here, zeroing the weight of a padding position), and the softmax had
# kept that very tensor to compute its gradient.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Attention-style weights over three positions, of which the first is padding and gets its
# weight set to zero after the softmax, in place.

# %%
SCORES = [[1.0, 2.0, 0.5], [0.3, -1.0, 2.0]]
VALUES = [1.0, 2.0, 3.0]


def broken(device):
    scores = torch.tensor(SCORES, device=device, requires_grad=True)
    weights = torch.softmax(scores, dim=-1)
    weights[:, 0] = 0.0  # drop the padding position, in place
    loss = (weights * torch.tensor(VALUES, device=device)).sum()
    loss.backward()
    return scores.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# To save memory, each operation keeps only what its backward formula needs, and keeps it by
# reference. The derivative of softmax is written in terms of its *output*
# (`ds = w * (g - (w * g).sum())`), so softmax saves `weights` itself. Every tensor carries a
# version counter that each in-place operation increments; the saved reference remembers the
# version it was saved at. `weights[:, 0] = 0.0` is an in-place write (into a view of `weights`),
# so when backward reaches the softmax it finds version 1 where it expected 0, and refuses:
# the values it would use are no longer the ones the forward computed. Which in-place writes
# are allowed depends on the formula: `exp` and `sigmoid` save their output, `x ** 2` and
# `mul` save their inputs, `x * 10` saves neither, so the same kind of edit is harmless in
# one place and fatal in the next. `nn.ReLU(inplace=True)` placed after one of these is the
# other classic way to get the message.
#
# ## The fix
# Write the edit out of place, so that the saved tensor stays as it was and the edit becomes
# a new node of the graph: `weights = weights.masked_fill(mask, 0.0)` (or multiply by a
# mask). If the message names an operation you do not recognise,
# `torch.autograd.set_detect_anomaly(True)` makes backward print the forward line that
# created the tensor.


# %%
def fixed(device):
    scores = torch.tensor(SCORES, device=device, requires_grad=True)
    weights = torch.softmax(scores, dim=-1)
    padding = torch.tensor([True, False, False], device=device)
    weights = weights.masked_fill(padding, 0.0)  # a new tensor; the saved output is untouched
    loss = (weights * torch.tensor(VALUES, device=device)).sum()
    loss.backward()
    return scores.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The autograd documentation's "In-place correctness checks" describes the mechanism: every
# tensor records the in-place operations applied to it, and backward raises if a tensor
# saved for it was modified afterwards. On the PyTorch Forums, "When inplace operation are
# allowed and when not" explains with `exp` and `x ** 2` why the same in-place edit is fine on
# one tensor and an error on another (it depends on what each backward formula saves), and
# "How in-place operation affect autograd?" gives the one-line rule: autograd checks that the
# tensors it needs have not changed since it recorded them. The check has existed since the
# early releases and no release removed it.

# %% [markdown]
# ## How the harness checks it
# Not every in-place `RuntimeError` is this one. Writing in place into a leaf that requires
# grad (`scores.masked_fill_(...)` on the input itself) is refused immediately, in the forward
# pass, with "a leaf Variable that requires grad is being used in an in-place operation"; no
# saved tensor is involved. The symptom matches the backward-time message only.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """backward() refused: a tensor saved for the gradient was modified in place."""
    return run.raised(RuntimeError, r"modified by an inplace operation")


def near_miss(device):
    scores = torch.tensor(SCORES, device=device, requires_grad=True)
    scores.masked_fill_(torch.tensor([True, False, False], device=device), -1e9)  # a leaf, in place
    weights = torch.softmax(scores, dim=-1)
    loss = (weights * torch.tensor(VALUES, device=device)).sum()
    loss.backward()
    return scores.grad


def check(run, device):
    """The gradient equals the softmax backward worked out by hand in float64: with
    g = dL/dw = VALUES masked at the padding, dL/ds = w * (g - (w * g).sum(-1))."""
    s = torch.tensor(SCORES, device=device, dtype=torch.float64)
    w = torch.softmax(s, dim=-1)
    g = torch.tensor(VALUES, device=device, dtype=torch.float64) * torch.tensor(
        [0.0, 1.0, 1.0], device=device, dtype=torch.float64
    )
    expected = w * (g - (w * g).sum(-1, keepdim=True))
    torch.testing.assert_close(run.value, expected.float())


CASE = Case(
    id="inplace-on-saved-tensor",
    title="An in-place write to a tensor that backward still needs",
    kind="error",
    symptom_category="error",
    symptom_line="backward() raises: a tensor saved for the gradient was modified by an inplace operation.",
    # The version-counter check predates every installable release and none removed it;
    # the message keeps the words "modified by an inplace operation".
    affects=(Affects("*", reason="autograd's version-counter check behaves the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: Automatic differentiation package, In-place correctness checks",
            url="https://docs.pytorch.org/docs/stable/autograd.html#in-place-correctness-checks",
        ),
        Source(
            title="PyTorch Forums: When inplace operation are allowed and when not",
            url="https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583/3",
        ),
        Source(
            title="PyTorch Forums: How in-place operation affect autograd?",
            url="https://discuss.pytorch.org/t/how-in-place-operation-affect-autograd/31173/2",
        ),
    ),
    tags=("autograd", "inplace", "version_counter", "softmax"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",
        "https://docs.pytorch.org/docs/stable/autograd.html#torch.autograd.detect_anomaly",
    ),
)
