# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `load_state_dict(strict=False)` can load nothing at all, silently
#
# Loading a checkpoint fails with `Missing key(s) in state_dict … Unexpected key(s) in
# state_dict`, you add `strict=False` to make it "tolerate the mismatch", and the error is gone.
# The model then evaluates like an untrained one, because it is: every key of the checkpoint
# was misnamed (saved from a wrapper, under a `net.` prefix), so not one tensor was copied.
# No exception, no warning. The only trace is the return value nobody looked at.

# %%
from typing import NamedTuple

import torch
from torch import nn

from torch_pitfalls import observe, seeded


class Wrapper(nn.Module):
    """How the checkpoint was saved: the model lived under an attribute, so its keys are
    `net.weight` and `net.bias` (a `DataParallel` wrapper does the same with `module.`)."""

    def __init__(self):
        super().__init__()
        self.net = nn.Linear(3, 2)


class Loaded(NamedTuple):
    """The loaded model's weight and bias, the checkpoint's, and what load_state_dict returned."""

    weight: torch.Tensor
    bias: torch.Tensor
    saved_weight: torch.Tensor
    saved_bias: torch.Tensor
    missing_keys: list
    unexpected_keys: list


def loaded(model, checkpoint, result, prefix=""):
    return Loaded(
        model.weight.detach().clone(),
        model.bias.detach().clone(),
        checkpoint[prefix + "weight"],
        checkpoint[prefix + "bias"],
        result.missing_keys,
        result.unexpected_keys,
    )


def checkpoint_and_model(device):
    """A trained model's state_dict (saved under the wrapper) and a fresh model to load it into."""
    with seeded(0):
        saved = Wrapper().to(device)
        model = nn.Linear(3, 2).to(device)  # different random weights from `saved.net`
    return saved.state_dict(), model


# %% [markdown]
# ## The broken code
# Load the wrapper's checkpoint into the bare model with `strict=False`, and look at the weight.


# %%
def broken(device):
    checkpoint, model = checkpoint_and_model(device)
    result = model.load_state_dict(checkpoint, strict=False)  # no error, no warning
    return loaded(model, checkpoint, result, prefix="net.")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    # missing_keys=['weight', 'bias'], unexpected_keys=['net.weight', 'net.bias']: every key.

# %% [markdown]
# ## Why
# `load_state_dict` walks the model's own parameter names (`weight`, `bias`) and looks each one up
# in the checkpoint. A name that is absent goes to `missing_keys`. A checkpoint entry that matches
# nothing goes to `unexpected_keys`. With `strict=True` (the default) either list non-empty raises
# the `RuntimeError` that lists them. `strict=False` does not make the matching smarter: it only
# skips the raise. Here the names differ by a prefix, so nothing matches, both lists hold every
# key, and the model keeps the random weights it was built with. The lists are still computed and
# returned, as a named tuple (`_IncompatibleKeys`). Ignoring that return value is what turns a
# loud error into a silent one.
#
# ## The fix
# Keep `strict=False` only for the mismatch you mean to allow, and check what it returned. If
# the keys carry a prefix, strip it (or load into the sub-module it belongs to) and load again.
# Then nothing may be missing.


# %%
def fixed(device):
    checkpoint, model = checkpoint_and_model(device)
    result = model.load_state_dict(checkpoint, strict=False)
    if result.missing_keys:  # the check the broken code skipped: here every key is missing
        prefix = "net."
        checkpoint = {k.removeprefix(prefix): v for k, v in checkpoint.items()}
        result = model.load_state_dict(checkpoint, strict=False)
    return loaded(model, checkpoint, result)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes, in their list of `nn.Module` methods, mention that `load_state_dict` with
# `strict=False` tolerates missing keys. That is true, and it is also the trap: it tolerates all
# of them. Loading became strict in January 2017 (pytorch/pytorch#451), because silently ignored
# keys had hidden exactly this kind of mistake, such as loading a `DataParallel` checkpoint into
# a plain model. `strict=False` came back as an opt-in in pytorch/pytorch#3159 (October 2017,
# torch 0.3), the lower end of `affects`. In pytorch/pytorch#9530 (2018) a maintainer pointed out
# that one extra level of wrapping could make a `strict=False` load load nothing, with no sign
# that it happened, and asked for the mismatched keys to be returned. `load_state_dict` returns
# them today as a named tuple with `missing_keys` and `unexpected_keys`. PR #123637 clarified
# their meaning in the docs. The PyTorch forum thread above gives the same advice: after
# `strict=False`, check the incompatible keys. No release has made `strict=False` warn, so the
# range is open above.

# %% [markdown]
# ## How the harness checks it
#
# A model whose weights differ from the checkpoint's is not always a failed load. A common
# ordering bug loads the checkpoint correctly and then runs the weight initialisation
# afterwards, which overwrites it. Nothing is missing there: the load worked, and was undone.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """Nothing was loaded: load_state_dict reported the model's every key missing, and the
    model still has its own random weight, not the checkpoint's."""
    if run.error is not None:
        return False
    seen = run.value
    return sorted(seen.missing_keys) == ["bias", "weight"] and not torch.equal(seen.weight, seen.saved_weight)


def near_miss(device):
    checkpoint, model = checkpoint_and_model(device)
    checkpoint = {k.removeprefix("net."): v for k, v in checkpoint.items()}
    result = model.load_state_dict(checkpoint, strict=False)  # every key matches
    with seeded(1):
        model.reset_parameters()  # "initialise the model" after loading it
    return loaded(model, checkpoint, result)


def check(run, device):
    """Nothing was reported missing or unexpected, and the model holds exactly the checkpoint's
    weight and bias, read from the checkpoint itself, not through the load."""
    seen = run.value
    assert seen.missing_keys == [] and seen.unexpected_keys == [], seen
    torch.testing.assert_close(seen.weight, seen.saved_weight, rtol=0, atol=0)
    torch.testing.assert_close(seen.bias, seen.saved_bias, rtol=0, atol=0)


CASE = Case(
    id="load-state-dict-strict-false",
    title="load_state_dict(strict=False) can load nothing at all, silently",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="After load_state_dict(strict=False) the model evaluates like an untrained one.",
    # `strict=False` exists since 0.3 (pytorch/pytorch#3159, Oct 2017) and has skipped every
    # mismatched key since. The range is open above.
    affects=(Affects(">=0.3", since="pytorch/pytorch#3159 (October 2017, torch 0.3) added strict=False"),),
    devices=("cpu", "cuda"),
    sources=(S1.at("section on nn.Module / state_dict: 'load_state_dict(strict=False) tolerates missing keys'"),),
    tags=("devices", "state_dict", "checkpoint", "strict"),
    references=(
        "https://github.com/pytorch/pytorch/pull/3159",  # adds strict=True/False
        "https://github.com/pytorch/pytorch/issues/9530",  # an extra prefix can load nothing
        "https://github.com/pytorch/pytorch/pull/451",  # why loading became strict in 2017
        "https://github.com/pytorch/pytorch/pull/123637",  # what missing/unexpected keys mean
        "https://discuss.pytorch.org/t/using-strict-false-for-fine-tuning/173787",
    ),
)
