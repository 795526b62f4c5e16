# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `Distribution.sample_n(n)` warns, as a `FutureWarning` from 2.4
#
# Reinforcement-learning and variational code from the torch 0.3 days draws a batch of samples
# with `dist.sample_n(n)`. It still returns `n` samples, but every call warns that `sample_n`
# "will be deprecated", and which warning it is depends on the release: a `UserWarning`
# (`sample_n will be deprecated. Use .sample((n,)) instead`) up to 2.3, a `FutureWarning`
# (``\`sample_n(n)\` will be deprecated. Use \`sample((n,))\` instead.``) from 2.4. A filter
# or a test that expected one category meets the other after the upgrade.

# %%
import torch
from torch.distributions import Distribution, Normal

from torch_pitfalls import observe, seeded


def _normal(device):
    return Normal(torch.tensor([0.0, 10.0], device=device), torch.tensor([1.0, 0.1], device=device))


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    with seeded(0):
        return _normal(device).sample_n(4)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `sample_n(n)` predates the `sample_shape` argument. Once `sample(sample_shape)` could draw any
# shape of batch, `sample_n(n)` became a synonym for `sample((n,))` and was marked as going
# away, with a `UserWarning`, already in 2018. It was never removed (as of 2.15.0 it still
# works), but in 2.4 torch gave its deprecation warnings the category `FutureWarning`, the one
# Python reserves for deprecations that end users should see, and reworded this one. The
# numbers drawn are the same in every release.
#
# ## The fix
# `dist.sample((n,))`: the same draw, from the same generator state, without a warning, on
# every release from 1.13.1 to 2.15.0. Use `dist.rsample((n,))` where gradients must flow
# through the samples.


# %%
def fixed(device):
    with seeded(0):
        return _normal(device).sample((4,))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `UserWarning` is old: pytorch/pytorch#4971 (January 2018) replaced `sample_n(n)` with
# `sample((n,))` in torch's own distribution tests to silence "sample_n will be deprecated. Use
# .sample((n,)) instead". In 2.4, #126898 ("[BE] wrap deprecated function/class with
# `typing_extensions.deprecated`") gave category-less deprecation warnings the category
# `FutureWarning`, and the message was reworded with backquotes. this project found no downstream
# issue about this particular call; the version matrix shows the category change. Observed on the
# CPU with this case: a `UserWarning` on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1, a `FutureWarning`
# on 2.4.1, 2.5.1, 2.6.0, 2.13.0 and 2.15.0 (open above).

# %% [markdown]
# ## How the harness checks it
#
# `torch.distributions` warns about other things in the old category. A hand-written
# distribution that forgets `arg_constraints` gets a `UserWarning` as soon as it is built with
# validation on: the distribution is incomplete, the way of sampling is fine.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The call warns that `sample_n` will be deprecated; the category tells the release."""
    pattern = r"sample_n.*deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


class _Coin(Distribution):
    """A Bernoulli written by hand, without `arg_constraints`."""

    def __init__(self, probs):
        self.probs = probs
        super().__init__(batch_shape=probs.shape, validate_args=True)

    def sample(self, sample_shape=torch.Size()):  # noqa: B008 - torch.distributions' own signature
        shape = self._extended_shape(sample_shape)
        return torch.bernoulli(self.probs.expand(shape))


def near_miss(device):
    with seeded(0):
        return _Coin(torch.tensor([0.25, 0.75], device=device)).sample((4,))


def check(run, device):
    """Four draws of the two-component normal: the same numbers `torch.normal` gives from the
    same seed, and no warning (the broken call draws the same numbers, so the missing warning is
    what tells the fix apart)."""
    loc = torch.tensor([0.0, 10.0], device=device)
    scale = torch.tensor([1.0, 0.1], device=device)
    with seeded(0):
        expected = torch.normal(loc.expand(4, 2), scale.expand(4, 2))
    assert run.value.shape == (4, 2), run.value.shape
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"sampling warned: {run.warnings[0].message}"


CASE = Case(
    id="distribution-sample-n",
    title="Distribution.sample_n(n) warns, as a FutureWarning from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="dist.sample_n(n) warns, and from torch 2.4 as a FutureWarning.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="sample_n warns with category=FutureWarning (observed from 2.4.1 on)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=0.4,<2.4",
            form="UserWarning",
            reason="sample_n warns with UserWarning (observed 1.13.1 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/4971",
            since="pytorch/pytorch#4971 (January 2018, before the 0.4.0 release) quotes the UserWarning "
            "'sample_n will be deprecated' from torch/distributions/distribution.py",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: deprecation warnings raised with FutureWarning"),),
    tags=("upgrade", "distributions", "deprecation", "warning_category", "minor"),
    references=(
        "https://github.com/pytorch/pytorch/pull/4971",  # the UserWarning in torch's own tests, 2018
        "https://github.com/pytorch/pytorch/pull/126898",  # category=FutureWarning for deprecations (2.4)
    ),
)
