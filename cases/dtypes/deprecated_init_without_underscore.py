# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `nn.init.xavier_uniform` without the underscore is deprecated
#
# Code copied from a 2017 tutorial initialises a layer with `nn.init.xavier_uniform(w)`. It
# still runs and still fills the weight, but every call prints a deprecation warning
# (`nn.init.xavier_uniform is now deprecated in favor of nn.init.xavier_uniform_`), and in a
# training script that builds many layers the log fills with it. The name without the
# trailing underscore is a compatibility alias kept since 0.4.

# %%
import math

import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    w = torch.empty(3, 5, device=device)
    with seeded(0):
        nn.init.xavier_uniform(w)  # no trailing underscore
    return w


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Since 0.4 the initialisers of `torch.nn.init` are named with a trailing underscore, torch's
# convention for functions that modify their argument in place (`xavier_uniform_`,
# `kaiming_normal_`, `normal_`, ...). The old names were kept as thin wrappers that warn and
# then call the new function, so the result is the same, only announced as deprecated. The
# warning's category changed in 2.4: before, it was a plain `UserWarning`; since, it is a
# `FutureWarning`, Python's category for deprecations aimed at end users. A filter written for
# one (`warnings.filterwarnings("ignore", category=UserWarning)`) does not silence the other.
#
# ## The fix
# Call the underscore name. It fills the tensor in place with U(-a, a), where
# a = gain * sqrt(6 / (fan_in + fan_out)); the check below draws the same numbers with
# `uniform_` and that bound computed by hand.


# %%
def fixed(device):
    w = torch.empty(3, 5, device=device)
    with seeded(0):
        nn.init.xavier_uniform_(w)
    return w


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes initialise a network with `init.xavier_uniform(net1[0].weight)`, the name without the
# underscore. pytorch/pytorch#6093 (March 2018, released in 0.4) added the underscore names and
# turned the old ones into warning aliases; #17429 proposed deleting them, and as of 2.13.0 they are
# still there. In the 2.3.1 wheel `torch/nn/init.py` warns with no category (a `UserWarning`), in
# the 2.4.0 and 2.4.1 wheels with `FutureWarning`. The change is that of pytorch/pytorch#126898,
# which added `category=FutureWarning` to the deprecation warnings raised without one; it was merged
# in May 2024 and reverted three days later over an internal failure, and pytorch/pytorch#127689
# ("This PR is split from PR #126898") is the likely carrier of the reland, though the commit that
# brought it into 2.4 was not identified. `affects` records both forms, split at 2.4. The version
# matrix observed exactly that split on the CPU (`reports/torch-*-cpu.json`): a `UserWarning` from
# 1.13.1 to 2.3.1 and a `FutureWarning` from 2.4.1 to 2.15.0, so `pitfalls matrix` derives "form
# 'UserWarning' -> 'FutureWarning' in 2.4.1" from the records.

# %% [markdown]
# ## How the harness checks it
#
# Not every warning from `nn.init` is this deprecation. Initialising a weight with a zero-sized
# dimension (an input size that came out 0 from a config) warns too, with a `UserWarning` of
# its own: the weight is empty, the name is fine.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The call warns that the name is deprecated; the category tells which release it is."""
    pattern = r"nn\.init\.xavier_uniform`? is now deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    w = torch.empty(3, 0, device=device)  # a layer with no inputs
    with seeded(0):
        nn.init.kaiming_uniform_(w)  # UserWarning: initializing zero-element tensors is a no-op
    return w


def check(run, device):
    """The weight holds the U(-a, a) draws that `uniform_` makes from seed 0 with the bound a
    worked out by hand, and the call emitted no warning (the broken alias fills the same
    numbers, so the missing deprecation warning is what tells the fix apart)."""
    # fan_in = 5 (columns), fan_out = 3 (rows), gain 1: a = sqrt(6 / 8).
    bound = math.sqrt(6.0 / (5 + 3))
    expected = torch.empty(3, 5, device=device)
    with seeded(0):
        expected.uniform_(-bound, bound)
    torch.testing.assert_close(run.value, expected)
    assert run.value.abs().max().item() <= bound
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="deprecated-init-without-underscore",
    title="nn.init.xavier_uniform without the underscore is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="nn.init.xavier_uniform warns on every call: the name without underscore is deprecated.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="the alias warns with category=FutureWarning (observed from 2.4.1 on); "
            "from #126898, which was reverted and relanded (likely as #127689; the commit is not identified)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=0.4,<2.4",
            form="UserWarning",
            reason="the alias warns with no category, i.e. UserWarning (observed 1.13.1 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/6093",
            since="PR #6093 (March 2018, released in 0.4.0) added the underscore names and made the "
            "old ones warning aliases",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at("the closing 'common operations': initialise the network with init.xavier_uniform(net1[0].weight)"),
    ),
    tags=("dtypes", "initialization", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/6093",  # underscore names added, old ones deprecated
        "https://github.com/pytorch/pytorch/issues/17429",  # proposal to delete the old names
        "https://github.com/pytorch/pytorch/pull/126898",  # FutureWarning change: merged, reverted three days later
        "https://github.com/pytorch/pytorch/pull/127689",  # "split from PR #126898": likely reland, commit unknown
    ),
)
