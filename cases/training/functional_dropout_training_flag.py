# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `F.dropout` ignores `model.eval()`
#
# A custom module applies dropout with the functional call `F.dropout(x, p)` in its
# `forward`. After `model.eval()` its predictions still change from one call to the next,
# and about half of every feature vector comes out zero. The functional form does not know
# about the module's mode: it drops whenever its own `training` argument is true, and that
# argument defaults to `True`.

# %%
import torch
import torch.nn as nn
import torch.nn.functional as F

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A module whose forward calls `F.dropout(x, p)`, switched to eval mode and fed a vector of
# ones.


# %%
class FunctionalDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p)  # training defaults to True


def broken(device):
    model = FunctionalDropout().eval()
    x = torch.ones(16, device=device)
    with seeded(0):
        out = model(x)
    return {"training": model.training, "out": out}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `model.eval()` sets the `training` attribute of the module and of its children, and
# `nn.Dropout` reads that attribute in its `forward`. `F.dropout` is a plain function: it has
# no module to read, only its `training` argument, which defaults to `True`. So it zeroes each
# element with probability `p` and scales the survivors by `1 / (1 - p)` (here 2) in every
# mode. Nothing warns, and the model's test accuracy is that of a randomly thinned network.
#
# ## The fix
# Pass the module's flag, `F.dropout(x, p, training=self.training)`, or use an `nn.Dropout`
# submodule, which does the same. In eval mode the layer is then the identity; in training
# mode every element is either 0 or `1 / (1 - p)` times its input, both checked by hand.


# %%
class FlaggedDropout(nn.Module):
    def __init__(self, p=0.5):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, training=self.training)


def fixed(device):
    model = FlaggedDropout(p=0.5).eval()
    x = torch.ones(16, device=device)
    with seeded(0):  # a wrong fix that draws in eval then fails the check, not the RNG guard
        out = model(x)
        training = model.training
        out_train = model.train()(x)
    return {"training": training, "out": out, "out_in_training": out_train}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's "naughty dropout" section: `torch.nn.functional.dropout` takes a `training`
# argument that decides whether elements are dropped, and it has to be set by hand even when the
# model is switched with `train()`/`eval()`, because a function keeps no state, unlike the
# `nn.Dropout` layer. The default itself has a history: until 0.4.1 it was `training=False`, so a
# bare `F.dropout(x)` silently did nothing, in training too. pytorch/pytorch#10417 (August 2018)
# changed it to `training=True`, a reviewer arguing that code relying on the old no-op default was
# already broken; from 1.0 on the pitfall is the one shown here. pytorch/pytorch#26338 reports
# exactly this module, and a maintainer answers that the functional form is expected to need
# `training=` passed explicitly.

# %% [markdown]
# ## How the harness checks it
#
# Zeros and doubled entries in a model's output are just as much the sign of the case
# `train-eval-mode`: an `nn.Dropout` layer, used correctly, in a model that nobody switched to
# eval. That layer is still in training mode, and dropping is what it should do there.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S2


def dropped(out, p=0.5):
    """The output of dropout at rate p on ones: every entry 0 or 1/(1-p), and some of each."""
    zero, kept = out == 0, out == 1 / (1 - p)
    return bool((zero | kept).all() and zero.any() and kept.any())


def symptom(run):
    """The module is in eval mode, and its output on ones is still dropout's: entries 0 or 2."""
    return run.error is None and run.value["training"] is False and dropped(run.value["out"])


def stable(value):
    """Which entries drop is random (seeded here, but the draw may differ between releases):
    keep the mode and the set of values that came out, not their order."""
    return {key: (sorted(set(v.tolist())) if isinstance(v, torch.Tensor) else v) for key, v in value.items()}


def near_miss(device):
    model = nn.Sequential(nn.Dropout(0.5))  # .eval() forgotten
    x = torch.ones(16, device=device)
    with seeded(0):
        out = model(x)
    return {"training": model.training, "out": out}


def check(run, device):
    """In eval mode the output is the input, ones, exactly; in training mode it is dropout's
    pattern (every entry 0 or 1/(1-p) = 2, some of each), properties read off the definition,
    so no random draw needs repeating."""
    torch.testing.assert_close(run.value["out"], torch.ones(16, device=device), rtol=0, atol=0)
    assert dropped(run.value["out_in_training"]), run.value["out_in_training"]


CASE = Case(
    id="functional-dropout-training-flag",
    title="F.dropout ignores model.eval()",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="After model.eval() predictions still change from call to call: F.dropout stays on.",
    # F.dropout's `training` defaults to True since pytorch/pytorch#10417 (August 2018, after
    # 0.4.1): from 1.0 on it drops in eval mode unless told otherwise. Before, the default was
    # False and the call did nothing unless told otherwise. Observed from 1.13.1 by the matrix.
    affects=(
        Affects(
            ">=1.0",
            since="pytorch/pytorch#10417 (August 2018) made training=True "
            "F.dropout's default; 1.0 is the first release with it",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S2.at("section '调皮的dropout' (the naughty dropout)"),),
    tags=("nn_module", "dropout", "functional", "eval"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html",
        "https://github.com/pytorch/pytorch/pull/10417",  # the default becomes training=True
        "https://github.com/pytorch/pytorch/issues/26338",  # "Behavior of F.dropout in eval mode"
    ),
)
