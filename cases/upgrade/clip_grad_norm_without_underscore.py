# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `clip_grad_norm` without the underscore gets past a `UserWarning` filter
#
# An old training loop clips with `torch.nn.utils.clip_grad_norm(model.parameters(), 1.0)`,
# the name without the trailing underscore. That name has warned since 0.4, and the script
# silenced it long ago the usual way: `warnings.filterwarnings("ignore", category=UserWarning)`.
# On 1.13 to 2.3 the log is clean. After an upgrade to 2.4 a `FutureWarning`
# "`torch.nn.utils.clip_grad_norm` is now deprecated in favor of
# `torch.nn.utils.clip_grad_norm_`" appears at every step: the deprecation changed category,
# and the filter no longer matches it.

# %%
import warnings

import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# The script's filter is scoped with `catch_warnings` here so that it does not outlive the
# run; in a real script it sits at the top of the file.


# %%
def _model_with_grads(device):
    with seeded(0):
        model = nn.Linear(4, 3).to(device)
    model(torch.linspace(-2.0, 2.0, 8, device=device).reshape(2, 4)).pow(2).sum().backward()
    return model


def broken(device):
    model = _model_with_grads(device)
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", category=UserWarning)  # how the script silenced the old warning
        total = nn.utils.clip_grad_norm(model.parameters(), max_norm=1.0)  # no trailing underscore
    return torch.cat([total.reshape(1)] + [p.grad.flatten() for p in model.parameters()])


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Since 0.4, in-place functions end with an underscore; `clip_grad_norm` became a thin alias
# that warns and calls `clip_grad_norm_`. Its warning had no category, so it was a
# `UserWarning`. In 2.4, PR #126898 wrapped torch's deprecated functions with
# `typing_extensions.deprecated(..., category=FutureWarning)` (and gave a `FutureWarning`
# category to other deprecation messages that had none): `FutureWarning` is Python's category
# for deprecations meant for end users, and IDEs now strike the old names through. A filter on
# `UserWarning` is not a filter on `FutureWarning`; the two categories are siblings.
#
# ## The fix
# Call `nn.utils.clip_grad_norm_`, which every release has, and drop the blanket filter that
# hid the warning. The check recomputes the total norm and the clipped gradients by hand.


# %%
def fixed(device):
    model = _model_with_grads(device)
    total = nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
    return torch.cat([total.reshape(1)] + [p.grad.flatten() for p in model.parameters()])


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#126898 ("[BE] wrap deprecated function/class with
# `typing_extensions.deprecated`", May 2024, following #126888) is the change in 2.4: in the
# installed 2.4.1, `clip_grad_norm` is decorated with `@deprecated(...,
# category=FutureWarning)`, where 2.3.1 called `warnings.warn` with no category. The old name
# has tripped users since 0.4: keon/seq2seq#26 and NVIDIA/tacotron2#90 replaced it after the
# `UserWarning` showed in their training logs, and nyu-mll/jiant#2 tracked it as an issue. The
# `deprecated-init-without-underscore` case shows the same category change on `nn.init`.
#
# Observed here on CPU: quiet behind the filter on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1; the
# `FutureWarning` on 2.4.1, 2.6.0, 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# The 2.4 change turned many deprecations into `FutureWarning`s with the same sentence. The
# initialisers without an underscore (`nn.init.xavier_uniform`) now warn "`nn.init.xavier_uniform`
# is now deprecated in favor of `nn.init.xavier_uniform_`": same category, same phrasing,
# another function.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The deprecation gets through the UserWarning filter as a FutureWarning."""
    return run.warned(FutureWarning, r"clip_grad_norm`? is now deprecated")


def near_miss(device):
    w = torch.empty(3, 4, device=device)
    with seeded(0):
        nn.init.xavier_uniform(w)  # FutureWarning from 2.4 (a UserWarning before)
    return w


def check(run, device):
    """The first entry is the 2-norm of the unclipped gradients; the rest are those gradients
    scaled by max_norm / (norm + 1e-6); and nothing warned, filter or no filter."""
    model = _model_with_grads(device)
    grads = torch.cat([p.grad.flatten() for p in model.parameters()])
    norm = grads.pow(2).sum().sqrt()
    scale = torch.clamp(1.0 / (norm + 1e-6), max=1.0)
    torch.testing.assert_close(run.value, torch.cat([norm.reshape(1), grads * scale]))
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="clip-grad-norm-without-underscore",
    title="clip_grad_norm without the underscore gets past a UserWarning filter",
    kind="warning",
    symptom_category="warning",
    symptom_line="clip_grad_norm without the underscore gets past a UserWarning filter from torch 2.4.",
    affects=">=2.4",
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("deprecation warnings without a category become FutureWarning (#126898)"),),
    tags=("upgrade", "clip_grad", "deprecation", "warning_filters"),
    references=(
        "https://github.com/pytorch/pytorch/pull/126898",  # category=FutureWarning for deprecations (2.4)
        "https://github.com/pytorch/pytorch/issues/126888",  # the proposal behind it
        "https://github.com/keon/seq2seq/pull/26",  # downstream fix: use clip_grad_norm_
        "https://github.com/NVIDIA/tacotron2/pull/90",  # downstream fix: use clip_grad_norm_
    ),
)
