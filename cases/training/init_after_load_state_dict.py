# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Weight initialisation that runs after `load_state_dict`
#
# You load a trained checkpoint to evaluate it, or to resume training, and the model scores
# like an untrained one. `load_state_dict` reported no missing and no unexpected keys, the
# file is the right one, and a training run resumed from it starts at the loss of an
# untrained network. The model-building function loads the weights and *then* applies the
# project's custom initialisation (`model.apply(init_weights)`), which overwrites every
# tensor it just loaded.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A two-class classifier whose checkpoint is known exactly: it predicts the larger of the
# two inputs, so it is right on every sample. `build_model` loads it, then initialises.


# %%
class Classifier(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(2, 2)

    def forward(self, x):
        return self.fc(x)


def init_weights(m):  # the project's initialisation, meant for training from scratch
    if isinstance(m, nn.Linear):
        nn.init.xavier_uniform_(m.weight)
        nn.init.zeros_(m.bias)


def checkpoint(prefix=""):
    """What torch.load(path) returned: class 1 exactly when the second input is larger."""
    return {prefix + "fc.weight": torch.tensor([[1.0, -1.0], [-1.0, 1.0]]), prefix + "fc.bias": torch.zeros(2)}


def evaluation_set(device):
    with seeded(1):
        x = torch.randn(200, 2)
    return x.to(device), (x[:, 1] > x[:, 0]).long().to(device)


def evaluate(model, keys, device):
    x, y = evaluation_set(device)
    with torch.no_grad():
        accuracy = (model(x).argmax(1) == y).float().mean().item()
    return {
        "missing_keys": sorted(keys.missing_keys),
        "unexpected_keys": sorted(keys.unexpected_keys),
        "weight": model.fc.weight.detach().cpu().clone(),
        "accuracy": accuracy,
    }


def build_model(state_dict, device):
    with seeded(0):
        model = Classifier()
        keys = model.load_state_dict(state_dict)
        model.apply(init_weights)  # runs after the load
    return model.to(device), keys


def broken(device):
    model, keys = build_model(checkpoint(), device)
    return evaluate(model, keys, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `load_state_dict` copies the checkpoint's tensors into the model's existing parameters, in
# place, and returns; it does not mark the parameters as loaded or protect them in any way.
# Initialisers such as `nn.init.xavier_uniform_` are also in-place writes into the same
# parameters: whichever runs last wins. When initialisation comes after the load, the
# checkpoint's values are gone without a trace, and the report from `load_state_dict`
# (no missing keys, no unexpected keys) is true and useless, because it describes the load,
# not what the model holds afterwards. The same happens when a training script calls
# `model.reset_parameters()` or re-runs a custom `_init_weights` after restoring a
# checkpoint, or when a wrapper builds the model with pretrained weights and the caller
# initialises it again.
#
# ## The fix
# Initialise first and load last: put the initialisation in `__init__` (or call it before
# `load_state_dict`), so that loading is the final write to the parameters. After loading,
# compare one tensor with the checkpoint (`torch.equal(model.fc.weight, state["fc.weight"])`)
# or evaluate on a few known samples before trusting the run.


# %%
def fixed(device):
    with seeded(0):
        model = Classifier()
        model.apply(init_weights)  # initialise first
        keys = model.load_state_dict(checkpoint())  # loading is the last write
    return evaluate(model.to(device), keys, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# huggingface/picotron#32 asks why the checkpoint-loading code calls `init_model_parameters`
# after `load_state_dict`, since it overwrites the weights just loaded; another user confirms
# the same problem when resuming training. thulab/DeepHash#54 reports the TensorFlow form:
# pretrained weights loaded first, then `tf.global_variables_initializer()` run, which
# re-initialises them. PyTorch's "Saving and Loading Models" tutorial shows the intended
# order: construct the model, then `load_state_dict`, then `model.eval()`, with nothing
# writing to the parameters in between. `load_state_dict` and the `nn.init` functions have
# always copied in place.

# %% [markdown]
# ## How the harness checks it
# A model that evaluates like an untrained one after a load that "worked" can also be one
# where nothing was loaded: a checkpoint saved from a `DataParallel` wrapper has `module.` in
# every key, and `load_state_dict(..., strict=False)` silently skips them all
# (`load-state-dict-strict-false`). That load returns a list of missing keys; the symptom
# requires an empty one, so it does not claim that case.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The load reported every key matched, yet the model's weight is not the checkpoint's and
    the model is no better than chance (under 75% on a task the checkpoint gets 100% right)."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["missing_keys"] == []
        and v["unexpected_keys"] == []
        and not torch.equal(v["weight"], checkpoint()["fc.weight"])
        and v["accuracy"] < 0.75
    )


def near_miss(device):
    with seeded(0):
        model = Classifier()
        model.apply(init_weights)
        keys = model.load_state_dict(checkpoint(prefix="module."), strict=False)  # nothing matches
    return evaluate(model.to(device), keys, device)


def check(run, device):
    """The weight is bit-for-bit the checkpoint's, and the accuracy equals the one worked out
    by hand: the checkpoint's logits are (x0 - x1, x1 - x0), so it predicts class 1 exactly
    when x1 > x0, which is how the labels were made: 100%."""
    v = run.value
    assert v["missing_keys"] == [] and v["unexpected_keys"] == [], v
    assert torch.equal(v["weight"], checkpoint()["fc.weight"]), v["weight"]
    x, y = evaluation_set(device)
    by_hand = ((x[:, 1] > x[:, 0]).long() == y).float().mean().item()
    assert v["accuracy"] == by_hand == 1.0, (v["accuracy"], by_hand)


CASE = Case(
    id="init-after-load-state-dict",
    title="Weight initialisation that runs after load_state_dict",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A loaded checkpoint evaluates like an untrained model: an init ran after load_state_dict.",
    # load_state_dict and nn.init both write into the parameters in place, and the last write
    # wins, on every release.
    affects=(Affects("*", reason="load_state_dict and nn.init write in place on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="huggingface/picotron#32: Why do we need to call `init_model_parameters` after `load_state_dict`",
            url="https://github.com/huggingface/picotron/issues/32",
        ),
        Source(
            title="thulab/DeepHash#54: Will there be a problem to load pretrained imagenet model? "
            "(initializer run after loading, TensorFlow)",
            url="https://github.com/thulab/DeepHash/issues/54",
        ),
        Source(
            title="PyTorch tutorial: Saving and Loading Models",
            url="https://pytorch.org/tutorials/beginner/saving_loading_models.html",
        ),
    ),
    tags=("training", "checkpoint", "state_dict", "initialization"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.load_state_dict",
        "https://docs.pytorch.org/docs/stable/nn.init.html",
    ),
)
