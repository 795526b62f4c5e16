# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `from torch._six import ...` fails: the module is gone
#
# Library code written in the Python 2 era imports its compatibility names from torch:
# `from torch._six import string_classes, inf`, then tests `isinstance(path, string_classes)`
# or clips with `max_norm == inf`. It ran quietly on every 1.x release. After the upgrade to
# 2.0 the import itself fails, `ModuleNotFoundError: No module named 'torch._six'`, so the
# whole package (a data loader's collate function, an optimizer wrapper, a COCO evaluator)
# no longer imports, whatever the user does with it.

# %%
import importlib
import math

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A helper that accepts a path or a list of paths, and a norm type that may be infinite, with
# the names spelled the way code from 2018 spelled them.


# %%
def broken(device):
    from torch._six import inf, string_classes  # ModuleNotFoundError on 2.0

    def as_list(paths):
        return [paths] if isinstance(paths, string_classes) else list(paths)

    grads = torch.tensor([3.0, -4.0], device=device)
    return as_list("a.pt"), as_list(["a.pt", "b.pt"]), grads.norm(p=inf)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch/_six.py` was torch's own copy of the `six` idea: names that differed between Python 2
# and 3 (`string_classes`, `int_classes`, `inf`, `nan`, `container_abcs`). Once torch had
# dropped Python 2, most of them were plain aliases (`string_classes = (str, bytes)`,
# `inf = math.inf`), and pytorch/pytorch#94709 deleted the module for 2.0. It was private (the
# leading underscore), so there was no deprecation warning first: the import simply stops
# working.
#
# ## The fix
# Use the Python 3 names directly: `str` (or `(str, bytes)`) for `string_classes`, `int` for
# `int_classes`, `collections.abc` for `container_abcs`, and `math.inf` or `torch.inf` for
# `inf` (`torch.inf` exists on 1.13.1 too). They work on every release. The check repeats the
# computation with plain arithmetic: the infinity norm of [3, -4] is 4.


# %%
def fixed(device):
    inf, string_classes = math.inf, (str, bytes)

    def as_list(paths):
        return [paths] if isinstance(paths, string_classes) else list(paths)

    grads = torch.tensor([3.0, -4.0], device=device)
    return as_list("a.pt"), as_list(["a.pt", "b.pt"]), grads.norm(p=inf)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#94709 removed `torch/_six.py` during the 2.0 cycle. The 2.0.0 release notes
# file it under Deprecations ("Deprecated private API torch._six"), but the entry itself
# says the module was removed, and lists the replacements (`str`, `int`, `from torch import
# inf, nan`). The fallout was wide because the
# names had been copied into many libraries: NVIDIA/apex#1724 ("torch2.0.1 No module named
# 'torch._six'", from `string_classes` in apex's data utilities), facebookresearch/fairscale#1106
# (switched to `torch.inf`, citing #94709), facebookresearch/SlowFast#649 (`int_classes` in a
# sampler). Observed here on CPU: the import succeeds on 1.13.1 and fails from 2.0.1 on (releases run:
# 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.13.0,
# 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and `reproduced` from 2.0.1 on).

# %% [markdown]
# ## How the harness checks it
#
# Another private torch module a user guesses at fails with the same exception type: someone
# who read that `_six` was made public and tries `torch.six` gets a `ModuleNotFoundError`
# about that name, which never existed on any release.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The import of torch._six itself fails (the module name, quoted, as Python reports it)."""
    return run.raised(ModuleNotFoundError, r"No module named 'torch\._six'")


def near_miss(device):
    return importlib.import_module("torch.six")  # ModuleNotFoundError: No module named 'torch.six'


def check(run, device):
    """A single path becomes a one-element list, a list stays a list, and the infinity norm is
    the largest absolute value, max(|3|, |-4|) = 4."""
    assert run.error is None, f"raised {run.error!r}"
    single, several, norm = run.value
    assert single == ["a.pt"] and several == ["a.pt", "b.pt"], (single, several)
    torch.testing.assert_close(norm.cpu(), torch.tensor(max(abs(3.0), abs(-4.0))))


CASE = Case(
    id="torch-six-removed",
    title="from torch._six import ... fails: the module is gone",
    kind="error",
    symptom_category="error",
    symptom_line="from torch._six import ... fails from torch 2.0: the module is gone.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="torch._six was deleted (observed: imports on 1.13.1, ModuleNotFoundError from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/94709",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.0.0").at("Deprecations, Releng: Deprecated private API torch._six (#94709)"),),
    tags=("upgrade", "import", "removal", "private_api"),
    references=(
        "https://github.com/pytorch/pytorch/pull/94709",  # torch/_six.py deleted
        "https://github.com/NVIDIA/apex/issues/1724",  # downstream: apex fails to import on 2.0.1
        "https://github.com/facebookresearch/fairscale/pull/1106",  # downstream fix: use torch.inf
        "https://github.com/facebookresearch/SlowFast/pull/649",  # downstream fix: int_classes
    ),
)
