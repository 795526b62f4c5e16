# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # One module instance used as two layers
#
# You stack "two" hidden layers with `nn.Sequential(*[nn.Linear(4, 4)] * 2)`, or call
# `self.conv` twice in `forward` meaning two convolutions. `print(model)` shows two layers,
# the state dict has `0.weight` and `1.weight`, training runs. But the model has the
# capacity of one layer: both positions are the same object with the same weights, and each
# optimizer step moves them together. Nothing fails; the model is just weaker than you think.

# %%
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Two 4→4 linear layers are meant: 2 × (16 weights + 4 biases) = 40 parameters.


# %%
def describe(model):
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "state_dict": sorted(model.state_dict()),
        "distinct_weights": len({id(layer.weight) for layer in model}),
    }


def broken(device):
    with seeded(0):
        model = nn.Sequential(*[nn.Linear(4, 4)] * 2).to(device)  # one Linear, listed twice
    return describe(model)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# In PyTorch a layer's weights are attributes of the module *object*. `[layer] * 2` is
# Python list repetition: two references to the one `nn.Linear` that was built, and
# `nn.Sequential` registers the same object under the names `0` and `1`. The forward pass
# applies that one weight matrix twice; in `backward()` the gradients of both uses add into
# its single `.grad`; `parameters()` lists each parameter once (so the optimizer sees 20,
# not 40), while `state_dict()` walks the names and saves the same tensors twice, so the
# checkpoint looks like two layers. Calling one submodule twice in `forward` does exactly the
# same. That is how weight sharing is *meant* to be written (a siamese encoder, tied
# input/output embeddings) — which is why nothing warns when it was not meant.
#
# TensorFlow 1 shared variables by *name*: `tf.get_variable` inside a
# `tf.variable_scope(..., reuse=True)` returns the existing variable of that name, and a
# Keras layer object called twice reuses its weights, just like a PyTorch module.
#
# ## The fix
# Build one instance per layer: `nn.Sequential(*[nn.Linear(4, 4) for _ in range(2)])` (or
# `copy.deepcopy(layer)` for each copy, which is what `nn.TransformerEncoder` does with the
# layer it is given). Share a module only where the sharing is the point.


# %%
def fixed(device):
    with seeded(0):
        model = nn.Sequential(*[nn.Linear(4, 4) for _ in range(2)]).to(device)
    return describe(model)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S3 is a TensorFlow detector (PocketFlow, 2019) whose AP fell to a tenth of the baseline
# after its architecture was changed. One of the author's experiments replaced a single
# `tf.layers.Conv2D` by `tf.keras.layers.Conv2D`, and the graph then failed while summing
# gradients: an `AddN` received a `[3,3,16,16]` gradient (from the weight-decay term) and a
# `[1,1,32,16]` one (from a convolution's filter). That is all the source says about it: the
# author found the same swap harmless elsewhere, got no answer when asking online, rewrote
# the network with the low-level API to no effect, and left the error unexplained; the AP
# collapse itself turned out to come from `tf.nn.l2_normalize`, whose default axis covers all
# dimensions. The explanation that follows is this corpus's hypothesis, not the source's:
# gradients of two different filters summed as if they belonged to one variable suggest that
# two layers had been tied to one weight by TensorFlow's name-based variable bookkeeping. The
# case shows
# that mechanism where it can be shown plainly, in PyTorch, where sharing follows object
# identity instead of names. The TensorFlow sharing it mirrors is
# `tf.compat.v1.variable_scope(..., reuse=True)` with `get_variable`, and Keras layer reuse.
#
# The PyTorch form turns up in published code: the book code behind "Deep Learning with PyTorch"
# built its residual blocks as `n_blocks * [ResBlock(...)]` (dlwpt-code#89), the VQ-VAE notebook
# did the same with `nn.ModuleList` (pytorch-vq-vae#2, confirmed as a bug and fixed), and
# ddsp_pytorch#37 asks whether two MLPs share weights by accident through the same list
# repetition.

# %% [markdown]
# ## How the harness checks it
#
# Too few parameters can have another cause. Two distinct layers kept in a plain Python list
# (`self.layers = [nn.Linear(4, 4) for _ in range(2)]`) are not registered at all: the
# optimizer and the state dict see none of their 40 parameters. That is another pitfall, and
# the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case, Source
from torch_pitfalls.sources import S3

TF_VARIABLE_SCOPE = Source(
    title="TensorFlow API docs: tf.compat.v1.variable_scope (variable sharing with reuse=True)",
    url="https://tensorflow.org/api_docs/python/tf/compat/v1/variable_scope",
)


def symptom(run):
    """The 'two layers' hold one layer's parameters (20 of 40), though the state dict names both."""
    if run.error is not None:
        return False
    seen = run.value
    looks_like_two = seen["state_dict"] == ["0.bias", "0.weight", "1.bias", "1.weight"]
    return looks_like_two and seen["parameters"] == 20 and seen["distinct_weights"] == 1


class UnregisteredLayers(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = [nn.Linear(4, 4) for _ in range(2)]  # a list, not an nn.ModuleList

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


def near_miss(device):
    with seeded(0):
        model = UnregisteredLayers().to(device)
    return {
        "parameters": sum(p.numel() for p in model.parameters()),
        "state_dict": sorted(model.state_dict()),
        "distinct_weights": len({id(layer.weight) for layer in model.layers}),
    }


def check(run, device):
    """Two layers' worth of parameters, counted by hand (2 × (4·4 weights + 4 biases) = 40), held
    by two distinct weight objects, under the state-dict names of two layers."""
    seen = run.value
    assert seen["parameters"] == 2 * (4 * 4 + 4), seen
    assert seen["distinct_weights"] == 2, seen
    assert seen["state_dict"] == ["0.bias", "0.weight", "1.bias", "1.weight"], seen


CASE = Case(
    id="shared-module-reuse",
    title="One module instance used as two layers",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Two layers built from one module instance share their weights: half the capacity.",
    # Parameters belong to module objects, and parameters() lists each object once; sharing by
    # reuse of an instance is a documented feature, not a bug, so no release changes it and no
    # lower bound is known. The matrix observes it from 1.13.1 on.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S3.at(
            "section 2.2: swapping tf.layers.Conv2D for tf.keras.layers.Conv2D; AddN shape mismatch in the gradients"
        ),
        TF_VARIABLE_SCOPE,
    ),
    tags=("modules", "weight_sharing", "parameters", "tensorflow"),
    references=(
        "https://github.com/deep-learning-with-pytorch/dlwpt-code/issues/89",  # a book's `n_blocks * [ResBlock(...)]`
        "https://github.com/zalandoresearch/pytorch-vq-vae/issues/2",  # the same in nn.ModuleList, fixed
        "https://github.com/acids-ircam/ddsp_pytorch/issues/37",  # two MLPs sharing weights by list multiplication
        "https://tensorflow.org/api_docs/python/tf/compat/v1/variable_scope",
    ),
)
