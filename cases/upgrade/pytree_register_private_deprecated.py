# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.utils._pytree._register_pytree_node` is deprecated
#
# A library teaches torch how to walk its own output container (a `ModelOutput`, a
# `BaseOutput`), so that `tree_map`, `torch.compile` and `torch.export` see the tensors inside:
# `torch.utils._pytree._register_pytree_node(Output, flatten, unflatten)`, at import time. The
# underscore was the only spelling there was on 1.13 to 2.1, and the call is quiet there. After
# the upgrade to 2.2 every import prints `UserWarning: torch.utils._pytree._register_pytree_node
# is deprecated. Please use torch.utils._pytree.register_pytree_node instead.`, once for each
# registered class: that is how transformers and diffusers users met it, in every script. From
# 2.4 the same message comes as a `FutureWarning`, so a filter written for the `UserWarning`
# stops hiding it. The registration itself still works.

# %%
import contextlib

import torch
import torch.utils._pytree as _torch_pytree

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A two-field output container, registered with the private function and then mapped over
# with `tree_map` (the registration is what lets `tree_map` reach the tensors inside).
#
# The pytree registry is a global table: each variant registers the class inside
# `_registry_restored()`, which puts every registry table of `torch.utils._pytree` back as it
# was (on 1.13 there is one, `SUPPORTED_NODES`; later releases add the serialization tables).


# %%
class Output:
    """A container of two tensors, as a library's output class holds its logits and loss."""

    def __init__(self, logits, loss):
        self.logits, self.loss = logits, loss


def _flatten(out):
    return [out.logits, out.loss], None


def _unflatten(values, context):
    return Output(*values)


_REGISTRIES = (
    "SUPPORTED_NODES",
    "SUPPORTED_SERIALIZED_TYPES",
    "SERIALIZED_TYPE_TO_PYTHON_TYPE",
    "_cxx_pytree_pending_imports",
)


@contextlib.contextmanager
def _registry_restored():
    saved = {name: getattr(_torch_pytree, name).copy() for name in _REGISTRIES if hasattr(_torch_pytree, name)}
    try:
        yield
    finally:
        for name, content in saved.items():
            table = getattr(_torch_pytree, name)
            table.clear()
            (table.update if isinstance(table, dict) else table.extend)(content)


def _doubled(device):
    """The container mapped through tree_map: every tensor inside doubled."""
    out = Output(torch.tensor([1.0, -2.0], device=device), torch.tensor(0.5, device=device))
    doubled = _torch_pytree.tree_map(lambda t: t * 2, out)
    return torch.cat([doubled.logits, doubled.loss.reshape(1)])


def broken(device):
    with _registry_restored():
        _torch_pytree._register_pytree_node(Output, _flatten, _unflatten)
        return _doubled(device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.utils._pytree` started as an internal module, and its registration function carried the
# underscore that says so; libraries used it anyway, because nothing else let `torch.fx`,
# `torch.compile` and later `torch.export` look inside their containers. pytorch/pytorch#112111
# (2.2) added the public `register_pytree_node`, which also registers the type with the optional C++
# pytree (optree), and made the private one warn and forward to the Python registry only. The
# warning was a plain `warnings.warn`, a `UserWarning` (so it reads in the installed 2.3.1). In 2.4
# the function is decorated with `typing_extensions.deprecated(..., category=FutureWarning)`
# instead: 2.4.1 warns with the decorator's message, in backquotes, and the installed 2.7.1 shows
# the decorator. The release is certain from the wheels: 2.3.1's `_pytree.py` calls `warnings.warn`
# with no category, 2.4.0's has `@deprecated(..., category=FutureWarning)` from `typing_extensions`.
# The change is that of pytorch/pytorch#126898, which moved torch's deprecations to that decorator
# and to `FutureWarning`; but that PR was merged in May 2024 and reverted three days later, so what
# reached 2.4 is a reland, most likely pytorch/pytorch#127689 ("This PR is split from PR #126898",
# same description). The commit that changed `_pytree.py` was not identified here. As of 2.15.0 the
# private function still registers.
#
# ## The fix
# Call `register_pytree_node` where it exists. It does not exist on 1.13 to 2.1, where the
# private function is the only spelling and is not deprecated, so code that must run there
# needs the guard a user writes: huggingface/diffusers#7008 tests the torch version, the fix below tests
# for the name (neither branch warns on its own release). The public function takes the same
# flatten and unflatten functions. The check doubles the values by hand.


# %%
def fixed(device):
    with _registry_restored():
        if hasattr(_torch_pytree, "register_pytree_node"):  # torch >= 2.2
            _torch_pytree.register_pytree_node(Output, _flatten, _unflatten)
        else:  # torch 1.13 to 2.1: the private function is the only spelling, and quiet there
            _torch_pytree._register_pytree_node(Output, _flatten, _unflatten)
        return _doubled(device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#112111 ("register pytree node type in both C++ pytree and Python pytree",
# November 2023, first released in 2.2) introduced `register_pytree_node` and the warning; in
# review the warning's text was corrected to name `torch.utils._pytree` (it first said
# `torch._utils`). Downstream it reached everyone who imported transformers or diffusers on
# 2.2: huggingface/transformers#27804 (a fix, closed as a duplicate of #27803) and #31903 (the
# warning still printed on 2.4), huggingface/diffusers#7000 and its fix #7008, which keeps the
# private call behind a version test for older torch; the same warning is reported by
# wilson-labs/cola#84 and Stability-AI/stable-audio-tools#37, and TorchFix was asked for a rule
# (meta-pytorch/torchfix#41). Observed here on CPU with this project's venvs: `absent` on
# 1.13.1 and 2.1.2 (2.1.2 has no public `register_pytree_node` yet), a `UserWarning` on 2.2.2
# and 2.3.1, a `FutureWarning` on 2.4.1, 2.7.1, 2.8.0, 2.9.1, 2.13.0, 2.14.1 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# The same module deprecates something else with the same category on recent releases: making
# a `LeafSpec` (the spec of a leaf, a class since before 1.13) warns with a `FutureWarning` on
# 2.13 that `isinstance(treespec, LeafSpec)` is deprecated in favour of `TreeSpec.is_leaf()`.
# Another name of `torch.utils._pytree`, another deprecation: the symptom must refuse it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The deprecation of the private registration; the category tells which release it is."""
    pattern = r"_pytree\._register_pytree_node`? is deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    return str(_torch_pytree.LeafSpec())


def check(run, device):
    """tree_map reached both tensors: [1, -2] and 0.5 doubled are [2, -4, 1]; and the
    registration did not warn (the private function registers the same way, so the warning is
    what tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    torch.testing.assert_close(run.value, torch.tensor([2.0, -4.0, 1.0], device=device))
    assert not run.warnings, f"the registration warned: {run.warnings[0].message}"


CASE = Case(
    id="pytree-register-private-deprecated",
    title="torch.utils._pytree._register_pytree_node is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="torch.utils._pytree._register_pytree_node warns that it is deprecated.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="_register_pytree_node warns with category=FutureWarning (observed 2.4.1 to 2.15.0); "
            "from #126898, which was reverted and relanded (likely as #127689; the commit is not identified)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=2.2,<2.4",
            form="UserWarning",
            reason="_register_pytree_node warns with no category, a UserWarning (observed 2.2.2 and 2.3.1; "
            "quiet on 1.13.1 to 2.1.2)",
            issue="https://github.com/pytorch/pytorch/pull/112111",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.2.0").at(
            "the first release whose torch.utils._pytree._register_pytree_node warns and points to the new public "
            "torch.utils._pytree.register_pytree_node"
        ),
    ),
    tags=("upgrade", "pytree", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/112111",  # the public register_pytree_node and the warning
        "https://github.com/pytorch/pytorch/pull/126898",  # FutureWarning change: merged, reverted three days later
        "https://github.com/pytorch/pytorch/pull/127689",  # "split from PR #126898": likely reland, commit unknown
        "https://github.com/huggingface/transformers/pull/27804",  # downstream: transformers' ModelOutput
        "https://github.com/huggingface/transformers/issues/31903",  # downstream: still warning on 2.4
        "https://github.com/huggingface/diffusers/issues/7000",  # downstream: diffusers' BaseOutput
        "https://github.com/huggingface/diffusers/pull/7008",  # downstream fix: the version guard
        "https://github.com/meta-pytorch/torchfix/issues/41",  # a TorchFix rule was asked for
    ),
)
