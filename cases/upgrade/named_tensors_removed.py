# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Named tensors are gone: `tensor.names` raises `AttributeError`
#
# A logging or visualisation helper labels each dimension of a tensor with
# `tensor.names`, falling back to `dim0`, `dim1`, ... where a name is `None`. On every release
# up to 2.12 a plain tensor answers `(None, None)` and the helper works, without touching the
# "experimental feature" warning that creating a named tensor prints. After an upgrade to 2.13
# the first call fails with `AttributeError: 'Tensor' object has no attribute 'names'`:
# named tensors were removed outright, and `rename`, `refine_names`, `align_to`, `has_names`
# and the `names=` argument of the factory functions went with them.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def dim_labels(t):
    """Label each dimension with its name, or with its position where it has none."""
    return [f"{name or f'dim{i}'}={size}" for i, (name, size) in enumerate(zip(t.names, t.shape))]


def broken(device):
    x = torch.zeros(2, 3, device=device)
    return dim_labels(x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Named tensors arrived in 1.3 as a prototype and never left it: most operators ignored or
# rejected names, `torch.compile` and `torch.export` did not support them, and keeping a names
# slot on every tensor cost overhead in the C++ core. pytorch/pytorch#173895 deleted the feature
# for 2.13 instead of deprecating it further; with it went the `names` attribute, which had
# existed on every tensor, named or not, so code that only *read* it (and never saw the
# experimental warning) breaks too.
#
# ## The fix
# Code that supports several torch releases reads the attribute through `getattr`, with a
# tuple of `None` as the default; code that only runs on 2.13+ drops the names altogether.
# The check compares the labels with the ones written by hand.


# %%
def fixed(device):
    x = torch.zeros(2, 3, device=device)
    names = getattr(x, "names", None) or (None,) * x.dim()  # torch >= 2.13 has no names
    return [f"{name or f'dim{i}'}={size}" for i, (name, size) in enumerate(zip(names, x.shape))]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#173895 removed named tensors; `python -m torch_pitfalls.surface diff` shows
# `Tensor.rename`, `refine_names`, `align_to`, `has_names` and the `torch._namedtensor_internals`
# helpers disappearing between 2.12.1 and 2.13.0. Downstream, heat's `broadcast_to` called the
# API (helmholtz-analytics/heat#2403), `import thunder` failed on 2.13 because lightning-thunder
# listed the removed methods in a module-level table (Lightning-AI/lightning-thunder#2829, which
# also broke litgpt's test collection), treescope had to handle tensors without names
# (google-deepmind/treescope#72), and sglang purged its uses ahead of the release
# (sgl-project/sglang#25911). Observed with this project's venvs: the helper works on 1.13.1
# and 2.12.1 and raises `AttributeError` on 2.13.0, 2.14.1 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# An `AttributeError` from a tensor is not always this removal: NumPy users write `x.ndims`,
# which torch never had (the attribute is `ndim`). Same exception, another attribute.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Reading `names` on a tensor fails: the attribute no longer exists."""
    return run.raised(AttributeError, r"has no attribute 'names'")


def near_miss(device):
    x = torch.zeros(2, 3, device=device)
    return x.ndims  # AttributeError: 'Tensor' object has no attribute 'ndims'


def check(run, device):
    """A 2 x 3 tensor with no names is labelled dim0=2, dim1=3."""
    assert run.value == ["dim0=2", "dim1=3"], run.value


CASE = Case(
    id="named-tensors-removed",
    title="Named tensors are gone: tensor.names raises AttributeError",
    kind="error",
    symptom_category="error",
    symptom_line="tensor.names raises AttributeError on the newest torch: named tensors are gone.",
    affects=(
        Affects(
            versions=">=2.13",
            reason="Tensor.names and the other named-tensor APIs no longer exist (observed 2.13.0 to "
            "2.15.0; present on 2.12.1)",
            issue="https://github.com/pytorch/pytorch/pull/173895",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.13.0").at(
            "Backwards Incompatible Changes: the removal of named tensors (pytorch/pytorch#173895)"
        ),
    ),
    tags=("upgrade", "named_tensors", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/173895",  # named tensors removed
        "https://github.com/helmholtz-analytics/heat/issues/2403",  # downstream: heat's broadcast_to
        "https://github.com/Lightning-AI/lightning-thunder/pull/2829",  # downstream: `import thunder` failed
        "https://github.com/google-deepmind/treescope/pull/72",  # downstream: treescope's tensor rendering
        "https://github.com/sgl-project/sglang/pull/25911",  # downstream: sglang purged its uses ahead of it
    ),
)
