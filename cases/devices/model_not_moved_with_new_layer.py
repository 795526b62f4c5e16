# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A layer added after `model.to(...)` stays behind
#
# You load a pretrained model, call `model.to(device, dtype)` right away, and then adapt it:
# you replace the classifier head for your number of classes, or rebuild a block with a new
# configuration. The first forward pass fails inside the new layer. On a GPU the error says the
# tensors are on different devices (`cuda:0 and cpu`). On a CPU, with a model converted to
# `float64` or `bfloat16`, it says `mat1 and mat2 must have the same dtype`. The model was
# moved, but only the layers it had at that moment.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small pretrained network is converted to double precision (on `device`) for a scientific
# application, then its 3-class head is replaced by a 2-class one.

# %%
X = [[0.5, -1.0, 2.0, 0.0], [1.5, 0.5, -0.5, 1.0]]


def pretrained():
    with seeded(0):
        return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 3))


def new_head(in_features=8):
    with seeded(1):
        return nn.Linear(in_features, 2)


def broken(device):
    model = pretrained()
    model.to(device, torch.float64)  # converts the parameters the model has now
    model[2] = new_head()  # created afterwards: float32, on the CPU
    x = torch.tensor(X, device=device, dtype=torch.float64)
    return model(x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `nn.Module.to` (like `.cuda()`, `.double()`, `.half()`) is not a setting stored on the model.
# It is a one-time walk over the parameters and buffers that are registered at the moment of
# the call. Each of them is converted and put back in place, and then the call is over. A module
# created later is built like any new module: on the default device (the CPU) with the default
# dtype (`float32`). Assigning it as a submodule registers it, so it shows up in
# `model.parameters()`, but nothing converts it. The same happens to a tensor created inside
# `forward` without `device=` and `dtype=` (a mask, a positional table, `torch.zeros(...)`). On
# a CPU-only machine the device half of the mistake is invisible, because the new layer is
# already on the right device. The dtype half still shows it, as here.
#
# ## The fix
# Finish changing the model's structure first, then move and convert it once: build the new
# head, assign it, and call `model.to(device, dtype)` after that. The call is cheap for
# parameters that are already converted, so calling it again after a change is also fine. Create
# an optimizer only after the last conversion, since it holds the parameter tensors it was given.
# Inside `forward`, create tensors with `device=x.device, dtype=x.dtype`, or register them as
# buffers so that `.to` converts them too.


# %%
def fixed(device):
    model = pretrained()
    model[2] = new_head()  # change the structure first
    model.to(device, torch.float64)  # then convert everything, the new head included
    x = torch.tensor(X, device=device, dtype=torch.float64)
    return model(x)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# `nn.Module.to`'s documentation says it modifies the module in place, that is, the parameters
# and buffers the module holds when it is called. In NVIDIA/Isaac-GR00T#280 the policy loader
# moved a model loaded with `torch_dtype=COMPUTE_DTYPE` to its device and then rebuilt its
# action head from the config, so the new head was built on the CPU in the default dtype. The
# fix in NVIDIA/Isaac-GR00T#294 moves the model after the new head's weights are copied in.
# In open-mmlab/mmdetection#638 a block added to the FPN neck failed with "Input type
# (torch.cuda.FloatTensor) and weight type (torch.FloatTensor) should be the same", because its
# parameters were still on the CPU. Two related cases fail the same way for other reasons:
# `tensor-to-is-not-inplace` (the converted copy of a tensor is thrown away) and
# `submodules-in-plain-list` (layers kept in a Python list, which `.to` never sees). The
# behaviour is the design of `Module.to`, unchanged since it arrived in 0.4.

# %% [markdown]
# ## How the harness checks it
# Not every failure inside a freshly added layer is about where it lives. A new head built with
# the wrong `in_features` (6 instead of 8), moved correctly, fails at the same line with "mat1
# and mat2 shapes cannot be multiplied": a shape mistake, which the symptom refuses because it
# only accepts the dtype or device messages. The fix's output is checked against the network
# written as two matrix products in float64, with the same seeded weights.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The forward pass failed inside the new layer on a dtype mismatch (on the CPU: float64
    input, float32 weight) or a device mismatch (on a GPU: a CUDA input, a CPU weight)."""
    return run.raised(RuntimeError, r"same dtype|expected scalar type|same device|two devices|should be the same")


def near_miss(device):
    model = pretrained()
    model[2] = new_head(in_features=6)  # wrong width
    model.to(device, torch.float64)
    return model(torch.tensor(X, device=device, dtype=torch.float64))


def check(run, device):
    """relu(x W1^T + b1) W2^T + b2 in float64, with W1, b1 from the seeded pretrained body and
    W2, b2 from the seeded new head; the result is float64 on `device`."""
    body, head = pretrained()[0], new_head()
    x = torch.tensor(X, dtype=torch.float64)
    hidden = torch.relu(x @ body.weight.detach().double().T + body.bias.detach().double())
    expected = hidden @ head.weight.detach().double().T + head.bias.detach().double()
    torch.testing.assert_close(run.value.detach(), expected.to(device))


CASE = Case(
    id="model-not-moved-with-new-layer",
    title="A layer added after model.to(...) stays behind",
    kind="error",
    symptom_category="error",
    symptom_line="A layer added after model.to(device, dtype) keeps float32 on the CPU; forward fails on dtype or device.",
    affects=(
        Affects(
            ">=0.4",
            since="the 0.4.0 release notes, which introduced Module.to",
            reason="Module.to converts the parameters registered at the time of the call",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="NVIDIA/Isaac-GR00T#280: error in the weight loading code (action head rebuilt after model.to)",
            url="https://github.com/NVIDIA/Isaac-GR00T/issues/280",
        ),
        Source(
            title="NVIDIA/Isaac-GR00T#294: load model to device after creating new action head",
            url="https://github.com/NVIDIA/Isaac-GR00T/pull/294",
        ),
        Source(
            title="open-mmlab/mmdetection#638: when i add a specific layer, some error happened",
            url="https://github.com/open-mmlab/mmdetection/issues/638",
        ),
        Source(
            title="PyTorch docs: torch.nn.Module.to (modifies the module in place)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.to",
        ),
    ),
    tags=("devices", "to", "dtype", "fine_tuning", "module"),
    references=("https://docs.pytorch.org/docs/stable/notes/cuda.html#best-practices",),
)
