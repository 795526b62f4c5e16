# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `@torch.no_grad()` on a class is deprecated
#
# An evaluation helper is written as a class and decorated with `@torch.no_grad()` so that the
# work its constructor does builds no graph. On 1.13 it runs silently. From 2.0 on, defining
# the class warns: `Decorating classes is deprecated and will be disabled in future versions.
# You should only decorate functions or methods.` From 2.4 the same warning is a
# `FutureWarning` instead of a `UserWarning`, so a filter written for one lets the other
# through. The decoration never did what it looks like either: the name no longer refers to a
# class but to a function that builds one, so `isinstance(obj, Scorer)` raises `TypeError`.

# %%
import inspect

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
def broken(device):
    w = torch.ones(3, device=device, requires_grad=True)

    @torch.no_grad()
    class Scorer:  # the whole class decorated
        def __init__(self, weight):
            self.score = (weight * 2).sum()

    s = Scorer(w)
    return s.score.requires_grad, inspect.isclass(Scorer)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.no_grad()` (like `enable_grad`, `inference_mode`) is a context manager that can also wrap a
# function. Applied to a class it wraps the class the same way: `Scorer` becomes a plain function
# that calls the class under `no_grad`. That happens to disable grad in `__init__`, but not in any
# other method, and the name is no longer a type (no `isinstance`, no subclassing, no class
# attributes through it). pytorch/pytorch#89522 deprecated it for 2.0 rather than removing it at
# once, because some code in the wild relied on it. In 2.4 this warning became a `FutureWarning`,
# with the other deprecation warnings of torch's that had no category: the change of
# pytorch/pytorch#126898, which was reverted three days after it was merged and reached 2.4 through
# a reland (most likely pytorch/pytorch#127689; see below).
#
# ## The fix
# Decorate the method that should run without grad, here `__init__`; the class stays a class.
# It runs without a warning on every release.


# %%
def fixed(device):
    w = torch.ones(3, device=device, requires_grad=True)

    class Scorer:
        @torch.no_grad()
        def __init__(self, weight):
            self.score = (weight * 2).sum()

    s = Scorer(w)
    return s.score.requires_grad, inspect.isclass(Scorer)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#89522 ("Deprecate decorating classes with torch.no_grad and similar",
# fixing #89450) added the warning for 2.0, listed among the deprecations of the 2.0.0 notes;
# pytorch/pytorch#89574 tracks turning it into an error, which had not happened as of 2.15.0.
# What changed in 2.4 is only the category: in the 2.3.1 wheel the `warnings.warn` of
# `torch/utils/_contextlib.py` has no category, in the 2.4.1 wheel it passes `FutureWarning`
# (and `stacklevel=2`), the edit that pytorch/pytorch#126898 made to torch's deprecation
# warnings that had no category. That PR was merged in May 2024 and reverted three days later
# over an internal failure; #127689 ("This PR is split from PR #126898", same description) is
# the likely carrier of the reland, but the commit that brought the edit into 2.4 was not
# identified here. The release itself is certain: the 2.3.1 and 2.4.0 wheels differ exactly
# there. Downstream, MuseTalk's real-time inference prints it at every start on 2.x: the log
# in TMElyralab/MuseTalk#163 (a report about something else) shows the `UserWarning` from
# `torch/utils/_contextlib.py` before the first line of the run. Observed with this project's
# venvs: silent on 1.13.1, a `UserWarning` on 2.0.1, 2.1.2, 2.2.2 and 2.3.1, a
# `FutureWarning` on 2.4.1, 2.6.0, 2.13.0 and 2.15.0 (`python -m torch_pitfalls.surface diff`
# shows the category change between 2.3.1 and 2.4.1).

# %% [markdown]
# ## How the harness checks it
#
# Other deprecations in the same category are not this one: `torch.nn.utils.clip_grad_norm`
# (no trailing underscore) warns that it is deprecated, a `UserWarning` before 2.4 and a
# `FutureWarning` since, exactly like the decorator's warning, about another function.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, seeded
from torch_pitfalls.sources import release_notes


def symptom(run):
    """Decorating the class warned; the category tells the release."""
    pattern = r"Decorating classes is deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    with seeded(0):
        layer = torch.nn.Linear(2, 1).to(device)
    layer(torch.ones(1, 2, device=device)).sum().backward()
    return torch.nn.utils.clip_grad_norm(layer.parameters(), 1.0)


def check(run, device):
    """The constructor ran without grad (the score has no graph: it does not require grad
    although the weight does) and `Scorer` is still a class; the broken decoration turns the
    name into a function."""
    requires_grad, is_class = run.value
    assert requires_grad is False, "the score was built with grad enabled"
    assert is_class is True, "the decorated name is no longer a class"
    assert not run.warnings, f"the definition warned: {run.warnings[0].message}"


CASE = Case(
    id="no-grad-decorating-class",
    title="@torch.no_grad() on a class is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="@torch.no_grad() on a class warns that decorating classes is deprecated.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="decorating a class warns with category=FutureWarning (observed from 2.4.1 to 2.15.0); "
            "from #126898, which was reverted and relanded (likely as #127689; the commit is not identified)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=2.0,<2.4",
            form="UserWarning",
            reason="decorating a class warns with no category, a UserWarning (observed 2.0.1 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/89522",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Deprecations: decorating classes with torch.no_grad and the other grad-mode decorators"
        ),
    ),
    tags=("upgrade", "autograd", "no_grad", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/89522",  # the deprecation (fixes #89450)
        "https://github.com/pytorch/pytorch/issues/89450",
        "https://github.com/pytorch/pytorch/issues/89574",  # plan: make it an error
        "https://github.com/pytorch/pytorch/pull/126898",  # FutureWarning change: merged, reverted three days later
        "https://github.com/pytorch/pytorch/pull/127689",  # "split from PR #126898": likely reland, commit unknown
        "https://github.com/TMElyralab/MuseTalk/issues/163",  # downstream: the warning in MuseTalk's startup log
    ),
)
