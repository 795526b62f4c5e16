# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `x.T` on a 1-D tensor does not make a column
#
# You have a vector `w` of shape `(3,)` and want the 3×3 outer product, so you write
# `w.T * w`, as you would with a column and a row in linear algebra. You get three numbers,
# the element-wise squares, because `w.T` is `w` itself. Recent torch prints a `UserWarning`
# (`The use of x.T on tensors of dimension other than 2 to reverse their shape is deprecated`)
# — but only the first time per process, so in a training loop or a notebook that has already
# shown it once, the mistake is silent again.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    w = torch.tensor([1.0, 2.0, 3.0], device=device)
    return w.T * w  # meant: column times row, a 3x3 outer product


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `x.T` is NumPy's `.T`: it reverses the order of *all* dimensions. A 1-D tensor has one
# dimension, and reversing a list of one changes nothing, so `w.T` is `w` and `w.T * w` is the
# element-wise product `[1, 4, 9]`. PyTorch, like NumPy, has no separate notion of a row or a
# column vector: a column is a 2-D tensor of shape `(3, 1)`, and you have to create that
# dimension yourself. Since the deprecation, torch warns when `.T` is used on a tensor that is
# not 2-D and says it will become an error in a future release; the warning is a
# `TORCH_WARN_ONCE`, so a process shows it one time only, even under
# `warnings.simplefilter("always")` (checked on 2.13.0: three uses, one warning; this project's
# harness turns torch's warn-always mode on so that every run sees it). `w.t()` stays silent: its
# documentation returns 0-D and 1-D tensors as they are. `w.mT` refuses 1-D input with a
# RuntimeError.
#
# ## The fix
# Add the dimension explicitly: `w[:, None]` (or `w.unsqueeze(1)`) is the `(3, 1)` column, and
# broadcasting it against the `(3,)` row gives the outer product. `torch.outer(w, w)` says the
# same thing in one call.


# %%
def fixed(device):
    w = torch.tensor([1.0, 2.0, 3.0], device=device)
    return w[:, None] * w


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))
    w = torch.tensor([1.0, 2.0, 3.0])
    print(torch.equal(w.unsqueeze(1) * w, torch.outer(w, w)))  # the same table, two more ways

# %% [markdown]
# ## Where it comes from
# The debugging notes (S1, section on reshaping) point out that `.T` on a tensor with a single
# dimension, such as `torch.tensor([1., 2., 3.])`, returns the same shape, and suggest
# `x[:, None]` instead. `Tensor.T` was proposed for NumPy compatibility in May 2019
# (pytorch/pytorch#20598), reversing every dimension, which makes it a no-op on 1-D tensors.
# pytorch/pytorch#64180 deprecated it for tensors that are not matrices; the review there
# notes that on 1-D input it "does what it does now (a no-op)", and the warning promises an
# error in a future release. On torch 2.13.0 `w.T` on a 1-D tensor still returns the tensor
# unchanged and emits the `UserWarning` shown above (and 0-D tensors get their own deprecation
# warning, pytorch/pytorch#92143). If a future release turns it into an error, this case's
# symptom (a `(3,)` result) disappears and the version matrix will flag it.

# %% [markdown]
# ## How the harness checks it
#
# A sibling deprecation is not this pitfall: generic code that applies `.T` to whatever comes
# in, here a 0-D scale factor, gets "Tensor.T is deprecated on 0-D tensors" (another warning,
# pytorch/pytorch#92143) and a scaled vector, `[2, 4, 6]`, which is what `s * w` means anyway.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The 'outer product' came back as the three squares [1, 4, 9] (w times itself, element by
    element); name the form by whether torch warned about x.T."""
    if run.error is not None or not isinstance(run.value, torch.Tensor) or tuple(run.value.shape) != (3,):
        return False
    if not torch.equal(run.value.cpu(), torch.tensor([1.0, 4.0, 9.0])):
        return False
    return "warning" if run.warned(UserWarning, r"x\.T.*deprecated") else "silent"


def near_miss(device):
    s = torch.tensor(2.0, device=device)
    w = torch.tensor([1.0, 2.0, 3.0], device=device)
    return s.T * w


def check(run, device):
    """The 3×3 table of products w_i·w_j, written out by hand."""
    by_hand = torch.tensor([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [3.0, 6.0, 9.0]], device=device)
    torch.testing.assert_close(run.value, by_hand)


CASE = Case(
    id="transpose-1d-noop",
    title="x.T on a 1-D tensor does not make a column",
    kind="warning",
    symptom_category="wrong-shape",
    symptom_line="w.T * w gives the element-wise squares, not an outer product: w.T of a vector is the vector.",
    affects=(
        # Observed on 2.13.0: same shape back, plus the deprecation warning. The warning comes
        # from pytorch/pytorch#64180, listed among the deprecations of the 1.11.0 release notes
        # (March 2022). The matrix (1.13 and later) sees this form only.
        Affects(
            versions=">=1.11",
            since="the 1.11.0 release notes: 'Deprecated x.T on tensors of dimension other than 0 or 2' "
            "(pytorch/pytorch#64180)",
            form="warning",
            reason="x.T on a 1-D tensor returns it unchanged and warns (once per process): deprecated",
            issue="https://github.com/pytorch/pytorch/pull/64180",
        ),
        # Tensor.T itself comes from pytorch/pytorch#20598 (May 2019; 1.2 is assumed to be the
        # first release with it, not verified); until the deprecation it reversed the dims
        # without a word. Neither end observed here: both lie below the matrix.
        Affects(
            versions=">=1.2,<1.11",
            since="Tensor.T was added by pytorch/pytorch#20598 (May 2019); 1.2.0 (August 2019) is the "
            "first release after it (inferred from the dates)",
            form="silent",
            reason="x.T on a 1-D tensor returned it unchanged, without a warning",
            issue="https://github.com/pytorch/pytorch/pull/20598",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("'尺度变化' (reshaping): x.T on a 1-D tensor keeps the shape; use x[:, None]"),),
    tags=("shapes", "transpose", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/64180",  # deprecate x.T for ndim != 2 (and 0)
        "https://github.com/pytorch/pytorch/pull/92143",  # later: .T/.mT/.H/.mH on 0-D deprecated
        "https://github.com/pytorch/pytorch/pull/20598",  # Tensor.T added (NumPy compatibility)
    ),
)
