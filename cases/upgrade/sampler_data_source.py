# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A custom `Sampler` that passes its dataset to `Sampler.__init__`
#
# A custom sampler (sorted by length, balanced by class, infinite) subclasses
# `torch.utils.data.Sampler` and, as every subclass should, calls the parent constructor with
# what that constructor asked for: `super().__init__(data_source)`. On 1.13 and 2.0 that
# argument was required. From 2.1 the call warns that "`data_source` argument is not used and
# will be removed in 2.2.0". It was not removed in 2.2: the warning went on through 2.9, and
# from 2.10 `Sampler` has no constructor of its own, so the same line raises
# `TypeError: object.__init__() takes exactly one argument` and the training script stops
# before its first batch.

# %%
import torch
from torch.utils.data import Sampler

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code


# %%
class LengthSortedSampler(Sampler):
    """Yields indices from the shortest item to the longest (the code as written for 1.13)."""

    def __init__(self, data_source):
        super().__init__(data_source)  # Sampler.__init__(self, data_source) was the 1.13 signature
        self.data_source = data_source

    def __iter__(self):
        return iter(sorted(range(len(self.data_source)), key=lambda i: len(self.data_source[i])))

    def __len__(self):
        return len(self.data_source)


_ITEMS = ["ccc", "a", "dddd", "bb"]


def broken(device):
    sampler = LengthSortedSampler(_ITEMS)
    return torch.tensor(list(sampler), device=device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `Sampler.__init__` never did anything with `data_source`: in 1.13 its body is `pass`, but
# the parameter was positional and required, so subclasses passed their dataset along.
# PR #97338 (2.1) made the parameter optional and warned when it is given, announcing removal
# in 2.2.0; the removal itself landed only with PR #163134, in 2.10. Without a
# `Sampler.__init__`, `super().__init__(data_source)` resolves to `object.__init__`, which
# takes no arguments.
#
# ## The fix
# No single call to `Sampler.__init__` works on every release: 1.13 and 2.0 require the
# argument, 2.10 rejects it. Since the parent constructor never did anything, the portable
# spelling is not to call it, as torch's own `SequentialSampler` and `RandomSampler` have
# always done, and to keep the dataset on the subclass. The check sorts the items by length
# by hand.


# %%
class PortableLengthSortedSampler(Sampler):
    def __init__(self, data_source):  # no call to Sampler.__init__: it never did anything
        self.data_source = data_source

    def __iter__(self):
        return iter(sorted(range(len(self.data_source)), key=lambda i: len(self.data_source[i])))

    def __len__(self):
        return len(self.data_source)


def fixed(device):
    sampler = PortableLengthSortedSampler(_ITEMS)
    return torch.tensor(list(sampler), device=device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#97338 ("Improve typing and documentation of Sampler API for customization",
# March 2023, in 2.1) turned the required `data_source` into an optional one that warns.
# pytorch/pytorch#123172 (April 2024) noted that 2.2.2 still warned about a removal "in
# 2.2.0"; pytorch/pytorch#163134 ("Remove data_source argument from Sampler", September 2025)
# removed it. Downstream, NVIDIA/physicsnemo#525 (fixing its #526) stopped passing the dataset
# to `super().__init__()` in its `InfiniteSampler` because of the warning.
#
# Observed here on CPU: quiet on 1.13.1 and 2.0.1; the `UserWarning` on 2.1.2, 2.2.2, 2.4.1,
# 2.6.0, 2.7.1 and 2.9.1; the `TypeError` on 2.10.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# A `TypeError` from a sampler is not always this. Handing `DataLoader` a sampler *class*
# instead of an instance (`sampler=LengthSortedSampler`) fails too, on every release, when the
# loader tries to call `len()` or `iter()` on it: the same exception type about another
# mistake.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, seeded
from torch_pitfalls.sources import release_notes


def symptom(run):
    """From 2.10 the constructor call raises TypeError (the argument reaches object.__init__);
    from 2.1 to 2.9 it warns that data_source is unused."""
    if run.raised(TypeError, r"object\.__init__\(\) takes exactly one argument"):
        return "TypeError"
    if run.warned(UserWarning, r"data_source.{0,3} argument is not used"):
        return "UserWarning"
    return False


def near_miss(device):
    loader = torch.utils.data.DataLoader(_ITEMS, sampler=LengthSortedSampler)  # the class, not an instance
    with seeded(0):  # iterating a DataLoader draws its base seed from the global RNG
        return list(loader)


def check(run, device):
    """The indices go from the shortest item ("a", index 1) to the longest ("dddd", index 2),
    and constructing the sampler emitted no warning."""
    torch.testing.assert_close(run.value, torch.tensor([1, 3, 0, 2], device=device))
    assert not run.warnings, f"the sampler warned: {run.warnings[0].message}"


CASE = Case(
    id="sampler-data-source",
    title="A custom Sampler that passes data_source to Sampler.__init__",
    kind="error",
    symptom_category="error",
    symptom_line="super().__init__(data_source) in a custom Sampler warns, then raises on a newer torch.",
    affects=(
        Affects(
            versions=">=2.10",
            form="TypeError",
            reason="Sampler.__init__ is gone; the argument reaches object.__init__ (observed 2.10.0 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/163134",
        ),
        Affects(
            versions=">=2.1,<2.10",
            form="UserWarning",
            reason="Sampler.__init__ warns that data_source is unused (observed 2.1.2 to 2.9.1)",
            issue="https://github.com/pytorch/pytorch/pull/97338",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.1.0").at("torch.utils.data: Sampler's data_source argument is unused and deprecated (#97338)"),
        release_notes("2.10.0").at("Backwards Incompatible Changes: Sampler no longer accepts data_source (#163134)"),
    ),
    tags=("upgrade", "sampler", "data", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/97338",  # the warning (2.1)
        "https://github.com/pytorch/pytorch/issues/123172",  # "will be removed in 2.2.0", but was not
        "https://github.com/pytorch/pytorch/pull/163134",  # the removal
        "https://github.com/NVIDIA/physicsnemo/pull/525",  # downstream fix: stop passing the dataset
    ),
)
