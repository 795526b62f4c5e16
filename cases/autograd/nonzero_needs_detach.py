# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.nonzero` results that had to be detached (torch 1.2)
#
# A loss keeps only the classes that occur: `v = u.nonzero()`, then `(i[v] / u[v]).mean()`,
# where `u` comes from the network. Code like this ran on torch 1.1. On 1.2.0 `backward()`
# stopped with `RuntimeError: range.second - range.first == t.size() INTERNAL ASSERT FAILED ...
# inconsistent range for TensorList output`, and the advice that went round was to detach what
# `nonzero` returns. Since 1.3.0 `nonzero` is again outside autograd: its result is a plain
# integer tensor, and the `.detach()` does nothing.

# %%
import torch

from torch_pitfalls import observe

X = [1.0, 2.0, 3.0, 4.0]
C = [1.0, 0.5, 3.0, 2.0]  # d = x - c is zero at index 0 and 2

# %% [markdown]
# ## The broken code
# The pattern of the upstream report, in miniature: `d` depends on a tensor that requires grad
# and has zeros; `nonzero` picks the safe positions; the loss divides at those positions
# only. The variant records what `nonzero` returned and the gradient that reached `x`.


# %%
def broken(device):
    x = torch.tensor(X, device=device, requires_grad=True)
    d = x - torch.tensor(C, device=device)
    v = d.nonzero()  # 1.2: this result was attached to the graph
    loss = (x[v] / d[v]).sum()  # 1.2: backward failed here
    loss.backward()
    return {
        "index dtype": v.dtype,
        "index requires_grad": v.requires_grad,
        "index grad_fn": None if v.grad_fn is None else type(v.grad_fn).__name__,
        "grad": x.grad,
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `nonzero` returns positions, integers, and positions have no gradient: it is not
# differentiable, and autograd should leave its result out of the graph. In 1.2 a refactoring
# turned `nonzero` into an "abstract" ATen function and, by mistake, left it marked as
# differentiable (the description of #26980). Its integer result then carried autograd history
# into whatever used it, here the indexing `x[v]`. The assert that fired lives in the generated
# autograd code (`Functions.cpp`, a check on a list of tensors), which fits an indexing node
# whose list of index tensors unexpectedly took part in the graph; the report does not trace it
# further, and this project could not run 1.2 to look. Detaching `v` (or building `nonzero` on a
# detached tensor) cuts that history, which is why it helped. The upstream reporter instead
# dropped `nonzero` altogether.
#
# What the result looked like on 1.2 (whether it reported `requires_grad=True`) was not
# observed here. No release that the version matrix can install (1.13.1 and later) has the
# bug, so the broken code runs and gives the right gradient. The case guards that: `nonzero`
# returns `int64` indices with no history, and the gradient flows through `x[v]` and `d[v]` to
# `x`. If a release marked `nonzero` differentiable again, the symptom would show and the run
# would be a `mismatch`.
#
# ## The fix
# The source's advice, which is harmless today: take the indices out of the graph,
# `v = d.nonzero().detach()`, or compute them on `d.detach()`. A boolean mask,
# `x[d != 0] / d[d != 0]`, avoids `nonzero` and the question entirely.


# %%
def fixed(device):
    x = torch.tensor(X, device=device, requires_grad=True)
    d = x - torch.tensor(C, device=device)
    v = d.nonzero().detach()
    loss = (x[v] / d[v]).sum()
    loss.backward()
    return {
        "index dtype": v.dtype,
        "index requires_grad": v.requires_grad,
        "index grad_fn": None,
        "grad": x.grad,
    }


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes list `torch.nonzero` among the tensor functions and warn that its autograd can go
# wrong: in some versions the result had to be detached, or backward failed. They give no version
# and no message. The upstream report that matches is pytorch/pytorch#26038 (September 2019),
# "Torch.nonzero() leads to crash in PyTorch 1.2", also posted on the PyTorch forums. A loss that
# indexed with `u.nonzero()` ran on 1.1 and failed on 1.2.0 with the internal assert quoted at the
# top. pytorch/pytorch#26980 made `nonzero` non-differentiable again. It is listed in the v1.3.0
# release tracker (#27011) as merged into the release branch, so 1.3.0 (October 2019) no longer
# has the bug. The same error from 1.2 still reached users in 2020 (open-mmlab/OpenPCDet#143,
# fixed by going back to 1.1). This project could not search PyTorch's git history with `git log
# -S` (the repository snapshot was too large to fetch); the bounds come from the issue and the
# release tracker. No installable release reproduces the bug, so on current torch the broken and
# fixed variants compute the same thing, and the outcome is `unverified` rather than `absent`:
# nothing here can tell the fix from the broken code.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: a `RuntimeError` from `backward()` in a loss built on `nonzero` that is about
# something else. Here everything was computed under `torch.no_grad()`, so there is no graph at
# all ("does not require grad"), which no `.detach()` cures.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The 1.2 behaviour: backward fails on the TensorList of indices, or the indices that
    nonzero returns are part of the autograd graph."""
    if run.raised(RuntimeError, r"inconsistent range for TensorList output"):
        return True
    if run.error is not None or not isinstance(run.value, dict):
        return False
    return run.value["index requires_grad"] or run.value["index grad_fn"] is not None


def near_miss(device):
    x = torch.tensor(X, device=device, requires_grad=True)
    with torch.no_grad():
        d = x - torch.tensor(C, device=device)
        v = d.nonzero()
        loss = (x[v] / d[v]).sum()
    loss.backward()  # raises: element 0 of tensors does not require grad


def check(run, device):
    """Integer indices without history, and the gradient written out by hand: where
    d = x - c != 0, d/dx (x / (x - c)) = -c / (x - c)**2; elsewhere 0."""
    value = run.value
    assert value["index dtype"] == torch.int64 and not value["index requires_grad"], value
    expected = [(-c / (x - c) ** 2) if x != c else 0.0 for x, c in zip(X, C)]
    torch.testing.assert_close(value["grad"], torch.tensor(expected, device=device))


CASE = Case(
    id="nonzero-needs-detach",
    title="torch.nonzero results that had to be detached (torch 1.2)",
    kind="historical",
    symptom_category="error",
    symptom_line="On torch 1.2 a loss indexed by nonzero() failed in backward with an internal assert.",
    # 1.2.0 only: pytorch/pytorch#26038 reports the code working on 1.1 and failing on 1.2;
    # pytorch/pytorch#26980 ("Make nonzero non differentiable as it supposed to be") fixes it and
    # was merged into the v1.3.0 release branch (release tracker #27011, commit 3c8ce2a57e).
    # Neither release can be installed by the version matrix, which starts at 1.13.1.
    affects=(
        Affects(
            ">=1.2,<1.3",
            since="pytorch/pytorch#26038: the code works on 1.1 and fails on 1.2.0; "
            "the fix #26980 went into 1.3.0 (release tracker #27011)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "section on other tensor functions: torch.nonzero's autograd may misbehave; "
            "in some versions its result must be detached or backward fails"
        ),
    ),
    tags=("autograd", "nonzero", "detach", "indexing"),
    references=(
        "https://github.com/pytorch/pytorch/issues/26038",  # the crash on 1.2, fine on 1.1
        "https://github.com/pytorch/pytorch/pull/26980",  # nonzero made non-differentiable again
        "https://github.com/pytorch/pytorch/issues/27011",  # v1.3.0 release tracker: #26980 merged
        "https://discuss.pytorch.org/t/torch-nonzero-leads-to-crash-in-pytorch-1-2/55729",
        "https://github.com/open-mmlab/OpenPCDet/issues/143",  # the same error met on 1.2 in 2020
    ),
)
