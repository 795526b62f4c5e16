# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A tensor attribute the module does not know about
#
# Your module keeps a constant tensor as `self.offset = torch.tensor(...)`. After
# `model.to("cuda")` the forward pass fails with "Expected all tensors to be on the same
# device"; after `model.double()` it runs, but part of the arithmetic is still in float32;
# and the checkpoint you saved with `model.state_dict()` has no `offset` in it at all, so a
# value that changed during training is silently lost on reload.

# %%
import torch
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A learnable scale and a constant offset, then the usual conversion. On CPU the device
# cannot change, so the conversion is to `float64` as well: the dtype shows the same thing.


# %%
class Affine(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.offset = torch.tensor([1.0, 2.0, 3.0])  # a plain attribute

    def forward(self, x):
        return x * self.scale + self.offset


def describe(model):
    return {
        "scale": (model.scale.dtype, model.scale.device.type),
        "offset": (model.offset.dtype, model.offset.device.type),
        "state_dict": sorted(model.state_dict()),
    }


def broken(device):
    model = Affine().to(device=device, dtype=torch.float64)
    return describe(model)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# An `nn.Module` knows its state through three registries: `_parameters`, `_buffers` and
# `_modules`. `Module.__setattr__` files an `nn.Parameter` into the first and a module into
# the third; any other value, a plain tensor included, becomes an ordinary Python attribute.
# `.to()`, `.cuda()`, `.double()` and `.half()` all work by visiting the registries (through
# `Module._apply`), and `state_dict()` / `load_state_dict()` read and write only parameters
# and persistent buffers. The plain tensor is invisible to all of them. On a GPU that shows
# up loudly, as a device mismatch in the forward pass; on CPU after `.double()` it is silent,
# because type promotion quietly mixes float32 into the float64 result; and the missing
# state-dict entry is silent everywhere.
#
# ## The fix
# Register the tensor: `self.register_buffer("offset", tensor)` for state that is not trained
# (it is converted, moved and saved; `persistent=False` keeps it out of the state dict), or
# wrap it in `nn.Parameter` if the optimizer should train it.


# %%
class AffineWithBuffer(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.register_buffer("offset", torch.tensor([1.0, 2.0, 3.0]))

    def forward(self, x):
        return x * self.scale + self.offset


def fixed(device):
    model = AffineWithBuffer().to(device=device, dtype=torch.float64)
    out = model(torch.tensor([10.0, 20.0, 30.0], device=device, dtype=torch.float64))
    return {**describe(model), "output": out.detach()}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's notes write a BatchNorm by hand. Its mean and variance are kept as plain tensor
# attributes of the module, next to running statistics registered with `register_buffer`,
# and the notes conclude that an attribute is only truly part of the module once it is
# registered as a buffer or a parameter.
#
# Upstream, in pytorch/pytorch#2641 (2017) a user's constant did not follow `.cuda()`; the
# maintainers explained that `.cuda()` only visits registered parameters and buffers, and that
# `register_buffer` is the intended way. #29807 shows a variant: the buffers were registered, but
# a plain Python list holding references to them was not updated by `.cuda()`. torchaudio fixed
# its own transforms the same way (pytorch/audio#369). No release changed the behaviour; the
# declared range starts at 0.4.0, whose release notes introduce the `Module.to(device, dtype)`
# this code calls.

# %% [markdown]
# ## How the harness checks it
#
# A tensor that kept its dtype is not always an unregistered one. A registered *integer*
# buffer (an index table) also stays `int64` after `.to(torch.float64)`, because `Module.to`
# casts only floating-point tensors, by design; it is moved and saved like any buffer. The
# symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The parameter was converted, the attribute was not, and the checkpoint lacks it."""
    if run.error is not None:
        return False
    seen = run.value
    return seen["offset"] != seen["scale"] and "offset" not in seen["state_dict"]


class AffineWithIndex(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(3))
        self.register_buffer("offset", torch.tensor([1, 2, 3]))  # int64, registered

    def forward(self, x):
        return x * self.scale + self.offset


def near_miss(device):
    return describe(AffineWithIndex().to(device=device, dtype=torch.float64))


def check(run, device):
    """What the conversion asked for, written out: the offset is float64 on the device like the
    scale, both are in the state dict, and x·1 + offset for x = [10, 20, 30] is [11, 22, 33]."""
    seen = run.value
    assert seen["offset"] == (torch.float64, torch.device(device).type), seen
    assert seen["state_dict"] == ["offset", "scale"], seen
    torch.testing.assert_close(seen["output"], torch.tensor([11.0, 22.0, 33.0], device=device, dtype=torch.float64))


CASE = Case(
    id="unregistered-tensor-attribute",
    title="A tensor attribute the module does not know about",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A tensor attribute does not follow model.to() or .double(): device errors or mixed dtypes.",
    # Module conversion and state_dict have only ever visited registered parameters and buffers
    # (pytorch/pytorch#2641, 2017). The range starts at 0.4, where `Module.to(device, dtype)`
    # (used here) appeared; the matrix observes it from 1.13.1 on, and no release changed it.
    affects=(
        Affects(
            ">=0.4",
            since="the 0.4.0 release notes introduce Module.to(device, dtype), which this "
            "code uses; pytorch/pytorch#2641 (2017) shows the same with .cuda() before",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("the hand-written BatchNorm: attributes must be registered as buffer or parameter"),),
    tags=("modules", "buffers", "state_dict", "device", "dtype"),
    references=(
        "https://github.com/pytorch/pytorch/issues/2641",  # maintainers: .cuda() only visits Parameters/buffers
        "https://github.com/pytorch/pytorch/issues/29807",  # a plain list of buffer references is not moved either
        "https://github.com/pytorch/audio/pull/369",  # torchaudio's fix: register such tensors as buffers
    ),
)
