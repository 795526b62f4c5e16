# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.cross` without `dim` is deprecated
#
# Geometry code (normals of a mesh, a protein backbone frame) takes the cross product of
# batches of 3-vectors with `torch.cross(a, b)`. On 1.13 to 2.1 it runs quietly. From 2.2 the
# first call prints a `UserWarning` from torch's C++ core: "Using torch.cross without
# specifying the dim arg is deprecated ... The default value of dim will change to agree with
# that of linalg.cross in a future release". Today the numbers are the same; the warning says
# that one day they may not be.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The warning is raised with `TORCH_WARN_ONCE`: once per process. To see it on every run,
# the demo turns on `torch.set_warn_always` for the call (and restores it); a real program
# sees it once, at its first cross product.


# %%
def _vectors(device):
    a = torch.tensor([[1.0, 0.0, 0.0], [0.0, 2.0, 0.0], [1.0, 1.0, 0.0], [0.0, 0.0, 3.0]], device=device)
    b = torch.tensor([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 0.0]], device=device)
    return a, b


def broken(device):
    a, b = _vectors(device)  # four 3-vectors per operand, shape (4, 3)
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # see the once-per-process warning on every run
    try:
        return torch.cross(a, b)  # no dim
    finally:
        torch.set_warn_always(before)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Without `dim`, `torch.cross` uses the *first* dimension of size 3, while
# `torch.linalg.cross` (since 1.11) uses the last one, `dim=-1`. For a batch of shape (N, 3)
# the two agree, until a batch happens to hold exactly three vectors: then `torch.cross`
# crosses the columns instead of the rows, silently. PR #108760 deprecated the implicit dim
# so that the default can later be made to agree with `linalg.cross`.
#
# ## The fix
# Say which dimension holds the vectors: `torch.cross(a, b, dim=-1)` (or
# `torch.linalg.cross(a, b)`); both work on every release from 1.13 on. The check works the
# cross products out by components.


# %%
def fixed(device):
    a, b = _vectors(device)
    before = torch.is_warn_always_enabled()
    torch.set_warn_always(True)  # same conditions as the broken run: a warning would show
    try:
        return torch.cross(a, b, dim=-1)
    finally:
        torch.set_warn_always(before)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#108760 ("Deprecate torch.cross default behaviour", September 2023, in 2.2)
# added a `TORCH_WARN_ONCE` to the C++ `cross` when `dim` is not given, with a BC note and an
# upgrade guide in the docs; #65752 (2021) had proposed it, because a batch dimension of size
# 3 gets crossed by mistake. The method spelling, `a.cross(b)`, reaches the same C++ check and
# prints the same warning: a fresh interpreter started with `-W always` shows it for the method
# alone (observed on 2.13.0 and 2.15.0). An earlier probe here missed it because it called
# `torch.cross` first in the same process, and the once-per-process warning had already been
# spent.
# Downstream: pyg-team/pytorch_geometric#8918 added `dim` to its calls after 2.2;
# uw-ipd/RoseTTAFold2NA#113 (fixed by #114) and pytorch/tutorials#2933 reported the warning.
#
# Observed here on CPU: quiet on 1.13.1, 2.0.1 and 2.1.2, the warning on 2.2.2, 2.4.1, 2.6.0,
# 2.13.0 and 2.15.0; the default has not changed as of 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# Other C++ warnings reach Python as the same `UserWarning`. Building a tensor from a tensor
# with `torch.tensor(t)` warns, on every release, that `clone().detach()` is the recommended
# spelling: a look-alike that is not about `cross`.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """torch.cross warns that calling it without dim is deprecated."""
    return run.warned(UserWarning, r"torch\.cross without specifying the dim")


def near_miss(device):
    a, _ = _vectors(device)
    return torch.tensor(a)  # UserWarning: To copy construct from a tensor, it is recommended ...


def check(run, device):
    """Each row is a x b worked out by components, and the call emitted no warning (the
    broken call returns the same rows, so its warning is what tells it apart)."""
    a, b = _vectors(device)
    ax, ay, az = a.unbind(-1)
    bx, by, bz = b.unbind(-1)
    expected = torch.stack((ay * bz - az * by, az * bx - ax * bz, ax * by - ay * bx), dim=-1)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="cross-without-dim",
    title="torch.cross without dim is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.cross(a, b) without dim warns that it is deprecated, from torch 2.2.",
    affects=">=2.2",
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.2.0").at("Deprecations: torch.cross's default dim, in favour of torch.linalg.cross (#108760)"),
    ),
    tags=("upgrade", "cross", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/108760",  # the deprecation (2.2)
        "https://github.com/pytorch/pytorch/issues/65752",  # why: the default dim is surprising
        "https://github.com/pyg-team/pytorch_geometric/pull/8918",  # downstream fix: pass dim
        "https://github.com/uw-ipd/RoseTTAFold2NA/issues/113",  # downstream report
    ),
)
