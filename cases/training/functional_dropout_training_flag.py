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

from harness import Case, observe, seeded
from harness.sources import S2

CASE = Case(
    id="functional-dropout-training-flag",
    title="F.dropout ignores model.eval()",
    kind="silent",
    # F.dropout's `training` defaults to True since pytorch/pytorch#10417 (August 2018, after
    # 0.4.1): from 1.0 on it drops in eval mode unless told otherwise. Before, the default was
    # False and the call did nothing unless told otherwise. Observed on 2.13.0.
    affects=">=1.0",
    devices=("cpu", "cuda"),
    sources=(S2.at("section '调皮的dropout' (the naughty dropout)"),),
    tags=("nn_module", "dropout", "functional", "eval"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.dropout.html",
        "https://github.com/pytorch/pytorch/pull/10417",   # the default becomes training=True
        "https://github.com/pytorch/pytorch/issues/26338",  # "Behavior of F.dropout in eval mode"
    ),
)

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
        return F.dropout(x, self.p)          # training defaults to True


def broken(device):
    model = FunctionalDropout().eval()
    x = torch.ones(16, device=device)
    with seeded(0):
        return model(x)


def symptom(run):
    """In eval mode the output still differs from the input (entries dropped to 0)."""
    return run.error is None and not torch.equal(run.value, torch.ones_like(run.value))


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
class FlaggedDropout(FunctionalDropout):
    def forward(self, x):
        return F.dropout(x, self.p, training=self.training)


def fixed(device):
    model = FlaggedDropout(p=0.5)
    x = torch.ones(16, device=device)
    with seeded(0):     # a wrong fix that draws in eval then fails the assertion, not the RNG guard
        out_eval = model.eval()(x)
        out_train = model.train()(x)
    torch.testing.assert_close(out_eval, x, rtol=0, atol=0)
    assert bool(((out_train == 0) | (out_train == 2)).all()), out_train
    assert bool((out_train == 0).any()), "training mode should still drop"
    return out_eval


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's "naughty dropout" section: `torch.nn.functional.dropout` takes a
# `training` argument that decides whether elements are dropped, and it has to be set by hand
# even when the model is switched with `train()`/`eval()`, because a function keeps no state,
# unlike the `nn.Dropout` layer. The default itself has a history: until 0.4.1 it was
# `training=False`, so a bare `F.dropout(x)` silently did nothing, in training too.
# pytorch/pytorch#10417 (August 2018) changed it to `training=True`, a reviewer arguing that
# code relying on the old no-op default was already broken; from 1.0 on the pitfall is
# the one shown here. pytorch/pytorch#26338 reports exactly this module, and a maintainer
# answers that the functional form is expected to need `training=` passed explicitly. The
# CUDA side was not observed by this project's runs.
