# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Updating a weight in place without `no_grad`
#
# You write gradient descent by hand, to learn how it works or to apply a custom update rule:
# `loss.backward()`, then `w -= lr * w.grad`. The update line raises
# `RuntimeError: a leaf Variable that requires grad is being used in an in-place operation`.
# The same happens to `w.add_(...)`, `w.clamp_(...)`, `w[0] = 0` or `nn.init.normal_(w)`
# written outside `torch.no_grad()` on a parameter. Rewriting the line as `w = w - lr * w.grad`
# makes the error go away. It also makes `w` a non-leaf tensor, so the next backward never
# fills `w.grad`.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Linear regression with a two-element weight and three samples, trained by hand-written
# gradient descent for three steps.

# %%
X = [[1.0, 2.0], [3.0, -1.0], [0.5, 0.5]]
Y = [5.0, 1.0, 1.5]
LR, STEPS = 0.05, 3


def data(device):
    return torch.tensor(X, device=device), torch.tensor(Y, device=device)


def broken(device):
    x, y = data(device)
    w = torch.zeros(2, device=device, requires_grad=True)
    for _ in range(STEPS):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        w -= LR * w.grad  # an in-place write into a leaf that requires grad
        w.grad.zero_()
    return w.detach()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `w` is a *leaf*: a tensor you created with `requires_grad=True`, not the result of an
# operation. Its gradient is what autograd accumulates into `w.grad`. With grad mode on, an
# in-place operation is itself recorded into the graph. On a non-leaf tensor that is fine, since
# the tensor just gets a new `grad_fn`. A leaf has no `grad_fn` to replace, and its `.grad` is
# defined with respect to its own value, so a recorded in-place change would have to turn it
# into a non-leaf. Autograd refuses instead. The update is not meant to be differentiated
# anyway: it belongs outside the graph, and `torch.no_grad()` says exactly that. The tempting
# rewrite `w = w - lr * w.grad` runs, but it builds a new tensor *from* `w` inside the graph and
# rebinds the name. The new `w` is no longer a leaf, its `.grad` is `None` after the next
# backward (reading it warns), and the next step fails on `None`. The optimizer, if one holds the
# old `w`, keeps updating the old tensor.
#
# ## The fix
# Do the update, and any other in-place edit of a parameter (clipping, re-initialising,
# masking), under `torch.no_grad()`. This is what `torch.optim` optimizers do inside `step()`.
# For an update that should be differentiable (meta-learning), write it out of place and keep
# the result as a new tensor on purpose.


# %%
def fixed(device):
    x, y = data(device)
    w = torch.zeros(2, device=device, requires_grad=True)
    for _ in range(STEPS):
        loss = ((x @ w - y) ** 2).mean()
        loss.backward()
        with torch.no_grad():
            w -= LR * w.grad  # the same object, updated outside the graph
        w.grad.zero_()
    return w.detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The PyTorch Forums thread "Leaf variable was used in an inplace operation" is the standard
# answer. It explains that a leaf is a tensor you create directly, that PyTorch does not allow
# in-place operations on leaves that require grad, and it gives the two ways out: clone first if
# the operation must be differentiable, `torch.no_grad()` if not. PyTorch's "Learning PyTorch
# with Examples" tutorial writes its hand-made update as `a -= learning_rate * a.grad` inside
# `with torch.no_grad():`, and the autograd notes ("In-place operations with autograd") explain
# why in-place operations and autograd interact at all. The "Inplace operation changes is_leaf
# attribute" thread lists which spellings raise (`c += 1`, `c.add_(1)`, `index_copy_`) and
# which do not. The check is older than every installable release, and its wording ("a leaf
# Variable") keeps the pre-0.4 name for tensors.

# %% [markdown]
# ## How the harness checks it
# Not every in-place `RuntimeError` is this one. Modifying in place a tensor that autograd saved
# for the backward pass (here, `exp`'s output) fails only at `backward()`, with "one of the
# variables needed for gradient computation has been modified by an inplace operation" (see
# `inplace-on-saved-tensor`). The symptom matches the leaf message only. The fix is checked
# against the same three gradient-descent steps written out in plain Python.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The update line refused to write in place into a leaf that requires grad."""
    return run.raised(RuntimeError, r"leaf Variable that requires grad .*in-place operation")


def near_miss(device):
    w = torch.zeros(2, device=device, requires_grad=True)
    scores = (w + 1.0).exp()  # exp saves its output for the backward pass
    scores += 1.0  # in place on a non-leaf: allowed now, refused at backward
    scores.sum().backward()
    return w.grad


def _by_hand():
    """Gradient descent on the mean squared error, in Python floats: grad = (2/N) X^T (Xw - y)."""
    w = [0.0, 0.0]
    for _ in range(STEPS):
        residual = [row[0] * w[0] + row[1] * w[1] - y for row, y in zip(X, Y)]
        grad = [2.0 / len(X) * sum(r * row[j] for r, row in zip(residual, X)) for j in range(2)]
        w = [w[j] - LR * grad[j] for j in range(2)]
    return w


def check(run, device):
    """The weights after three hand-written steps equal plain-Python gradient descent."""
    torch.testing.assert_close(run.value, torch.tensor(_by_hand(), device=device))


CASE = Case(
    id="inplace-on-leaf-requires-grad",
    title="Updating a weight in place without no_grad",
    kind="error",
    symptom_category="error",
    symptom_line="w -= lr * w.grad raises: a leaf Variable that requires grad is being used in an in-place operation.",
    affects=(
        Affects("*", reason="autograd refuses recorded in-place writes into leaves that require grad, by design"),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch Forums: Leaf variable was used in an inplace operation",
            url="https://discuss.pytorch.org/t/leaf-variable-was-used-in-an-inplace-operation/308/2",
        ),
        Source(
            title="PyTorch Forums: Inplace operation changes is_leaf attribute",
            url="https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297",
        ),
        Source(
            title="PyTorch tutorial: Learning PyTorch with Examples (manual update under torch.no_grad)",
            url="https://pytorch.org/tutorials/beginner/pytorch_with_examples.html",
        ),
    ),
    tags=("autograd", "inplace", "leaf", "no_grad", "optimizer"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/autograd.html#in-place-operations-with-autograd",
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.is_leaf.html",
    ),
)
