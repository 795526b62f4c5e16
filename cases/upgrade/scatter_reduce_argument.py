# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `scatter_(..., reduce="add")` with a tensor source is deprecated
#
# A graph network sums messages into their destination nodes with
# `out.scatter_(0, index, messages, reduce="add")`. On 1.13 it runs silently. From 2.0 the call
# prints `UserWarning: The reduce argument of torch.scatter with Tensor src is deprecated and
# will be removed in a future PyTorch release. Use torch.scatter_reduce instead`, raised from
# C++ (torch prints it once per process). The sums are unchanged; the warning says the
# argument is on its way out.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    out = torch.zeros(3, device=device)
    index = torch.tensor([0, 0, 2, 1, 2], device=device)  # destination of each message
    messages = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device)
    return out.scatter_(0, index, messages, reduce="add")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `scatter_` grew a `reduce` argument ("add", "multiply") before `scatter_reduce` existed. Once
# `scatter_reduce` offered more reductions ("sum", "prod", "mean", "amax", "amin") with
# autograd support, the overlap was confusing, and pytorch/pytorch#94082 proposed retiring
# `reduce=` on `scatter_` for tensor sources; pytorch/pytorch#94282 added the warning for 2.0.
# A scalar `value` with `reduce=` is not deprecated.
#
# ## The fix
# For sums, `scatter_add_` does exactly this and is quiet on every release. `scatter_reduce_`
# with `reduce="sum"` is the general replacement, but on 1.13 it still printed a "scatter_reduce()
# is in beta" warning; code that needs another reduction there guards it with a version test.


# %%
def fixed(device):
    out = torch.zeros(3, device=device)
    index = torch.tensor([0, 0, 2, 1, 2], device=device)
    messages = torch.tensor([1.0, 2.0, 3.0, 4.0, 5.0], device=device)
    return out.scatter_add_(0, index, messages)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#94082 (February 2023) proposed deprecating the `reduce` flag of `scatter_`,
# and pytorch/pytorch#94282 ("Add deprecation warning to reduce flag of scatter for Tensor src
# and redirect to scatter_reduce") added the C++ warning in time for 2.0; `python -m
# torch_pitfalls.surface diff` lists the new native message between 1.13.1 and 2.0.1. Downstream,
# tinygrad's test suite printed it for its `scatter` tests (tinygrad/tinygrad#8947), and the Rust
# bindings relay it too (LaurentMazare/tch-rs#846). Observed with this project's venvs: silent
# on 1.13.1, a `UserWarning` on 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.6.0, 2.13.0 and 2.15.0; the
# argument had not been removed as of 2.15.0. The case's runs see the warning every time because
# the harness turns on `torch.set_warn_always(True)` while a variant runs; a script sees it once.

# %% [markdown]
# ## How the harness checks it
#
# `torch.range` warns with a `UserWarning` that it is deprecated too, on every release: another
# deprecated call in the same category, not this one.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The C++ deprecation warning about scatter's reduce argument."""
    return run.warned(UserWarning, r"reduce argument of torch\.scatter with Tensor src is deprecated")


def near_miss(device):
    return torch.range(0, 4, device=device)  # UserWarning: torch.range is deprecated


def check(run, device):
    """Node 0 gets 1 + 2, node 1 gets 4, node 2 gets 3 + 5 (summed by hand), and nothing
    warned: the deprecated call sums the same, so the missing warning tells the fix apart."""
    expected = torch.tensor([3.0, 4.0, 8.0], device=device)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="scatter-reduce-argument",
    title="scatter_(..., reduce=) with a tensor source is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="scatter_(..., reduce=) with a tensor source warns to use scatter_reduce, from 2.0.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="scatter_ with a Tensor src and reduce= warns from C++ (observed 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/94282",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Deprecations: the reduce argument of Tensor.scatter_ with a Tensor src, in favour of scatter_reduce"
        ),
    ),
    tags=("upgrade", "scatter", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/issues/94082",  # proposal: deprecate reduce= of scatter_
        "https://github.com/pytorch/pytorch/pull/94282",  # the warning
        "https://github.com/tinygrad/tinygrad/pull/8947",  # downstream: tinygrad's tests hit it
        "https://github.com/LaurentMazare/tch-rs/issues/846",  # downstream: the Rust bindings print it
    ),
)
