# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `functorch.vmap` and `functorch.grad` are deprecated in favour of `torch.func`
#
# Per-sample gradients, ensembles and Jacobians written in 2022 use the functorch library that
# shipped inside the torch 1.13 wheel: `from functorch import vmap, grad`. On 1.13 the calls
# are quiet. After the upgrade to 2.0 each call prints `UserWarning: We've integrated
# functorch into PyTorch. As the final step of the integration, functorch.vmap is deprecated
# as of PyTorch 2.0 and will be deleted in a future version of PyTorch >= 2.3. Please use
# torch.vmap instead`. From 2.4 the same warning comes as a `FutureWarning`, so a filter
# written for the `UserWarning` stops silencing it. The results are unchanged.

# %%
import functorch
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Per-example gradients of a tiny linear model, the standard functorch recipe.

# %%
W = [0.5, -1.0, 2.0]
XS = [[1.0, 0.0, 0.0], [0.0, 2.0, 1.0]]  # two examples
YS = [1.0, 1.0]


def _loss(w, x, y):
    return (x @ w - y) ** 2


def _per_example_grads(vmap, grad, device):
    w = torch.tensor(W, device=device)
    xs, ys = torch.tensor(XS, device=device), torch.tensor(YS, device=device)
    return vmap(grad(_loss), in_dims=(None, 0, 0))(w, xs, ys)


def broken(device):
    return _per_example_grads(functorch.vmap, functorch.grad, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# functorch started as a separate library of JAX-like function transforms (`vmap`, `grad`, `jacrev`,
# ...), was shipped inside the torch wheel in 1.13, and in 2.0 moved into torch proper as
# `torch.func` (with `torch.vmap` as an alias). pytorch/pytorch#92279 turned the `functorch.*`
# transforms into thin wrappers that warn and call the `torch.func` version: the warning is a
# `UserWarning` because Python hides `DeprecationWarning` by default. In 2.4 the `warnings.warn` in
# `torch/_functorch/deprecated.py` gained the `FutureWarning` category: the change of
# pytorch/pytorch#126898, which gave that category to the deprecation warnings of torch's Python
# code that were raised without one, and which reached 2.4 through a reland after it was reverted
# (see below). The warning says the functorch names go away in a release ">= 2.3"; as of 2.15.0 they
# still run.
#
# ## The fix
# Use `torch.func.vmap` and `torch.func.grad`. They are the same functions, but `torch.func`
# does not exist on 1.13.1, so code that must also run there needs the guard a user would
# write: `torch.func` where it exists, functorch otherwise (on 1.13.1 functorch's names are
# not deprecated, so neither branch warns). The check compares with the per-example gradient
# of the squared error worked out by hand, 2 (x.w - y) x.


# %%
def fixed(device):
    if hasattr(torch, "func"):  # torch >= 2.0
        vmap, grad = torch.func.vmap, torch.func.grad
    else:  # torch 1.13: functorch ships in the wheel and is not deprecated there
        vmap, grad = functorch.vmap, functorch.grad
    return _per_example_grads(vmap, grad, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes open their Deprecations with "We've deprecated the functorch module in
# favor of the new torch.func module" (pytorch/pytorch#92279), pointing to a migration guide.
# Downstream: moskomule/hypergrad#1 ("PyTorch 2.0 is released, and functorch is deprecated") and
# unifyai/ivy#27440, which picks `torch.vmap` on 2.0 and functorch before, the same guard as the
# fix. The category change at 2.4 is the change of pytorch/pytorch#126898 ("[BE] wrap deprecated
# function/class with `typing_extensions.deprecated`"): where a `warnings.warn` whose message
# contains "deprecated" or "deprecation" had no category, it added `category=FutureWarning`. It was
# merged in May 2024 and reverted three days later over an internal failure; in June #127689 ("This
# PR is split from PR #126898", same description) took it up again, with #127690 stacked on it. The
# 2.4 code therefore came back through a later commit, most likely #127689's; which commit it was is
# not established here (torch's git history was not at hand). Comparing the 2.3.1 and 2.4.1 wheels,
# `warn_deprecated` went from `warnings.warn(warning, stacklevel=2)` to `warnings.warn(warning,
# FutureWarning, stacklevel=3)`. Observed here on CPU: quiet on 1.13.1, a `UserWarning` on 2.0.1 to
# 2.3.1, a `FutureWarning` from 2.4.1 on (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1,
# 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1, 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed the form its
# range declares, `absent` on 1.13.1).

# %% [markdown]
# ## How the harness checks it
#
# The other deprecated vmap is torch's own old prototype, `torch._vmap_internals.vmap`, which
# still backs `torch.autograd.functional`. Called directly it warns too, with the same
# category in each release ("Please use torch.vmap instead of torch._vmap_internals.vmap"; on
# 1.13 "Please use functorch.vmap instead of torch.vmap"): another name, another deprecation.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The deprecation warning that points from functorch to torch.func; its category tells
    which release it is."""
    pattern = r"functorch\.(vmap|grad)`? is deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    from torch._vmap_internals import vmap as prototype_vmap

    xs = torch.tensor(XS, device=device)
    return prototype_vmap(torch.sum)(xs)


def check(run, device):
    """Row i is the gradient of (x_i . w - y_i)^2 with respect to w, 2 (x_i . w - y_i) x_i,
    computed by hand; and the transforms did not warn (functorch gives the same numbers, so
    the warning is what tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    rows = []
    for x, y in zip(XS, YS):
        residual = sum(xi * wi for xi, wi in zip(x, W)) - y
        rows.append([2.0 * residual * xi for xi in x])
    torch.testing.assert_close(run.value, torch.tensor(rows, device=device))
    assert not run.warnings, f"the transforms warned: {run.warnings[0].message}"


CASE = Case(
    id="functorch-deprecated",
    title="functorch.vmap and functorch.grad are deprecated in favour of torch.func",
    kind="warning",
    symptom_category="warning",
    symptom_line="functorch.vmap and functorch.grad warn to use torch.func, from torch 2.0.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="the functorch transforms warn with category=FutureWarning (observed 2.4.1 to 2.15.0); "
            "from #126898, which was reverted and relanded (likely as #127689; the commit is not identified)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=2.0,<2.4",
            form="UserWarning",
            reason="the functorch transforms warn with no category, a UserWarning (observed 2.0.1 to 2.3.1; "
            "quiet on 1.13.1)",
            issue="https://github.com/pytorch/pytorch/pull/92279",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Deprecations, torch.func aka functorch: We've deprecated the functorch module in favor of the new "
            "torch.func module (#92279)"
        ),
    ),
    tags=("upgrade", "functorch", "vmap", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/92279",  # deprecation messages on functorch.* transforms
        "https://github.com/pytorch/pytorch/pull/126898",  # FutureWarning change: merged, reverted three days later
        "https://github.com/pytorch/pytorch/pull/127689",  # "split from PR #126898": likely reland, commit unknown
        "https://github.com/moskomule/hypergrad/issues/1",  # downstream: "functorch is deprecated" on 2.0
        "https://github.com/unifyai/ivy/pull/27440",  # downstream: torch.vmap on 2.0+, functorch before
    ),
)
