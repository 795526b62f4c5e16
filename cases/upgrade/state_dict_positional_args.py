# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `state_dict(destination, prefix)` with positional arguments warns, as a `FutureWarning` from 2.4
#
# A wrapper that saves its inner model under a prefix calls
# `self.module.state_dict(destination, prefix, keep_vars)`, with the arguments in the order of
# the signature, as wrappers have done since the first releases. The state dict is filled
# correctly, but torch warns "Positional args are being deprecated, use kwargs instead". Up to
# 2.3 the warning is a `UserWarning`; from 2.4 it is a `FutureWarning`, so a filter written
# for the first one (`warnings.filterwarnings("ignore", category=UserWarning, module="torch")`,
# or a logging setup that only routes one category) stops hiding it after the upgrade, and a
# suite run with `-W error::FutureWarning` starts to fail.

# %%
from collections import OrderedDict

import torch
from torch import nn

from torch_pitfalls import observe, seeded


def _model(device):
    with seeded(0):
        return nn.Linear(3, 2).to(device)


# %% [markdown]
# ## The broken code


# %%
def broken(device):
    model = _model(device)
    destination = OrderedDict()
    model.state_dict(destination, "encoder.")  # destination and prefix by position
    return dict(destination)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `state_dict(destination=None, prefix='', keep_vars=False)` was meant to be called with no
# arguments by users; `destination` and `prefix` were there for the recursion over
# submodules. In 2022 torch deprecated passing them by position (and discouraged `destination`
# in the docs), so that the signature could later become keyword-only. The deprecation came as
# a plain `warnings.warn` (a `UserWarning`);
# in 2.4 a pass over torch's deprecation messages gave them the category
# `FutureWarning`, Python's category for deprecations meant for end users. The state dict
# produced is the same in every release.
#
# ## The fix
# Pass them by keyword: `model.state_dict(destination=destination, prefix="encoder.")`. That
# spelling is accepted, without a warning, on every release from 1.13.1 to 2.15.0 (and a
# wrapper that only wants the prefixed keys can build them itself from `model.state_dict()`).


# %%
def fixed(device):
    model = _model(device)
    destination = OrderedDict()
    model.state_dict(destination=destination, prefix="encoder.")
    return dict(destination)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#72780 ("Fix `nn.Module.state_dict()`", February 2022) deprecated positional
# arguments and `destination`; #75404 reported the warning firing falsely on every nested module
# on main, and #75507 fixed that and reworded the message to "Positional args are being
# deprecated, use kwargs instead". In 2.4, #126898 ("[BE] wrap deprecated function/class with
# `typing_extensions.deprecated`") added `category=FutureWarning` to torch's deprecation warnings
# that had none, this one included. Downstream, determined-ai/determined#4062 is the warning in a
# user's log, and deepspeedai/DeepSpeed#5408 changed its engine's
# `self.module.state_dict(destination, prefix, keep_vars)` to keywords to stop it. Observed on the
# CPU with this case: a `UserWarning` on 1.13.1, 2.0.1, 2.1.2, 2.2.2 and 2.3.1, a `FutureWarning`
# on 2.4.1, 2.5.1, 2.6.0, 2.13.0 and 2.15.0 (open above).

# %% [markdown]
# ## How the harness checks it
#
# `nn.Module` has other deprecations that moved to `FutureWarning` in the same release. A
# backward hook registered with the old `register_backward_hook` on a module whose forward
# has several autograd nodes warns that non-full backward hooks are deprecated: same module,
# same category, another API and another fix (`register_full_backward_hook`).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The call warns that positional arguments are deprecated; the category tells the
    release."""
    pattern = r"positional arg.*deprecated"
    return run.warned_as(pattern, FutureWarning, UserWarning)


def near_miss(device):
    with seeded(0):
        model = nn.Sequential(nn.Linear(3, 2), nn.ReLU()).to(device)
    model.register_backward_hook(lambda module, grad_input, grad_output: None)
    model(torch.ones(1, 3, device=device, requires_grad=True)).sum().backward()
    return model[0].weight.grad


def check(run, device):
    """The prefixed keys hold the layer's own parameters (read from a second construction
    with the same seed), and the call emitted no warning."""
    expected = _model(device)
    assert list(run.value) == ["encoder.weight", "encoder.bias"], list(run.value)
    torch.testing.assert_close(run.value["encoder.weight"], expected.weight.detach())
    torch.testing.assert_close(run.value["encoder.bias"], expected.bias.detach())
    assert not run.warnings, f"state_dict warned: {run.warnings[0].message}"


CASE = Case(
    id="state-dict-positional-args",
    title="state_dict(destination, prefix) with positional arguments warns, as a FutureWarning from 2.4",
    kind="warning",
    symptom_category="warning",
    symptom_line="state_dict(destination, prefix) warns that positional args are deprecated.",
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="the positional-arguments warning has category=FutureWarning (observed from 2.4.1 on)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=1.12,<2.4",
            form="UserWarning",
            reason="the positional-arguments warning has no category, i.e. UserWarning (observed 1.13.1 to 2.3.1)",
            issue="https://github.com/pytorch/pytorch/pull/72780",
            since="pytorch/pytorch#72780 (February 2022) made positional arguments to state_dict warn; "
            "#75404 (April 2022) reports the warning on main after the 1.11 release, so the first "
            "release with it is 1.12.0",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(release_notes("2.4.0").at("Deprecations: deprecation warnings raised with FutureWarning"),),
    tags=("upgrade", "state_dict", "deprecation", "warning_category", "minor"),
    references=(
        "https://github.com/pytorch/pytorch/pull/72780",  # positional args and destination deprecated
        "https://github.com/pytorch/pytorch/pull/75507",  # the message reworded, recursion fixed
        "https://github.com/pytorch/pytorch/pull/126898",  # category=FutureWarning for deprecations (2.4)
        "https://github.com/deepspeedai/DeepSpeed/pull/5408",  # engine.py passes them by keyword
        "https://github.com/determined-ai/determined/issues/4062",  # the warning in users' logs
    ),
)
