# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `'DataParallel' object has no attribute ...`
#
# Your model has a helper method, say `freeze_backbone()`, or a plain attribute such as
# `num_classes`. After `model = nn.DataParallel(model)` the forward pass still works, but the
# next line that calls `model.freeze_backbone()` stops with `AttributeError: 'DataParallel' object
# has no attribute 'freeze_backbone'`. The method exists, but it belongs to the wrapped model,
# not to the wrapper.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded


class Net(nn.Module):
    """A backbone and a head, with a helper that freezes the backbone for fine-tuning."""

    def __init__(self):
        super().__init__()
        self.backbone = nn.Linear(4, 3)
        self.head = nn.Linear(3, 2)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))

    def freeze_backbone(self):
        for p in self.backbone.parameters():
            p.requires_grad_(False)


# %% [markdown]
# ## The broken code
# Wrap the model, as the multi-GPU recipe says, then call the model's own method on the wrapper.


# %%
def broken(device):
    with seeded(0):
        model = nn.DataParallel(Net().to(device))
    model.freeze_backbone()
    return [p.requires_grad for p in model.parameters()]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `nn.DataParallel(net)` returns a new module that holds `net` as its submodule `module`. Looking
# up an attribute on it searches the wrapper's own class, its instance dictionary, and then
# `nn.Module.__getattr__`. That last step checks only the wrapper's own parameters, buffers and
# submodules, and the only submodule is `module`. Methods and attributes defined on `Net` (and
# `Net`'s submodules such as `backbone`) are therefore out of reach, and `__getattr__` raises
# `AttributeError` naming the wrapper's class. Anything `nn.Module` itself defines still works
# through the wrapper (`parameters()`, `train()`, `to()`, calling it), so the error appears only
# at the first model-specific name. The same happens without a GPU. When CUDA is not available,
# `DataParallel` keeps `device_ids = []` and its `forward` calls the wrapped model directly, but
# it still wraps it (observed on 2.13.0, CPU).
#
# ## The fix
# Go through `.module`: `model.module.freeze_backbone()`. Code that has to work with and without
# the wrapper can unwrap once, with `net = model.module if isinstance(model, nn.DataParallel) else model`
# (the same applies to `DistributedDataParallel`).


# %%
def fixed(device):
    with seeded(0):
        model = nn.DataParallel(Net().to(device))
    model.module.freeze_backbone()
    flags = [p.requires_grad for p in model.parameters()]
    out = model(torch.ones(5, 4, device=device))
    return flags, tuple(out.shape)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes list `AttributeError: 'DataParallel' object has no attribute 'xxxx'` in their
# troubleshooting section. The fix they give is to reach the original network through
# `DataParallel.module`, for example `net.module.set_fix_method()`. Upstream, pytorch/pytorch#8071
# proposed forwarding every attribute to the wrapped module. The maintainers declined it: the
# wrapper defines members of its own, and forwarding would let those silently shadow the model's.
# Users who want forwarding can subclass `DataParallel` with their own `__getattr__`.
# pytorch/pytorch#16885 asked for the same thing and is closed. pytorch/pytorch#43329 is the error
# as users met it in 2020, when it appeared as `ModuleAttributeError`, a subclass of `AttributeError`.
# The lower end of `affects` is 0.4 because before PR #3318 the wrapper could not be built without
# a GPU (pytorch/pytorch#3301). The upper end is open because no change is known.

# %% [markdown]
# ## How the harness checks it
#
# Not every `AttributeError` after wrapping is the wrapper's. Unwrapping correctly and then
# misspelling the method fails with the same exception type, but it names the model's own class:
# the method really is missing, and `.module` cannot help.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """AttributeError naming DataParallel and the missing method."""
    return run.raised(AttributeError, r"'DataParallel' object has no attribute 'freeze_backbone'")


def near_miss(device):
    with seeded(0):
        model = nn.DataParallel(Net().to(device))
    model.module.freeze_backbon()  # a typo: 'Net' object has no attribute 'freeze_backbon'
    return [p.requires_grad for p in model.parameters()]


def check(run, device):
    """The flags, in `parameters()` order, are written out by hand from `Net`: backbone.weight and
    backbone.bias frozen, head.weight and head.bias still trained; and the wrapped model still
    maps a batch of 5 to 5 rows of 2 outputs."""
    flags, out_shape = run.value
    assert flags == [False, False, True, True], flags
    assert out_shape == (5, 2), out_shape


CASE = Case(
    id="dataparallel-attribute",
    title="'DataParallel' object has no attribute ...",
    kind="error",
    symptom_category="error",
    symptom_line="After nn.DataParallel, model.my_method() raises: DataParallel object has no attribute.",
    # DataParallel has never forwarded attribute lookups to the wrapped model (PR 8071 declined,
    # issue 16885 closed). It can be built on a CPU-only machine since PR 3318 (0.4 at the latest).
    # In 1.6-1.7 the error was torch.nn.modules.module.ModuleAttributeError, a subclass of
    # AttributeError.
    affects=(
        Affects(
            ">=0.4",
            since="PR 3318 (pytorch/pytorch#3301), in 0.4: DataParallel can be built on a machine without a GPU",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "Troubleshooting: AttributeError: 'DataParallel' object has no attribute 'xxxx'; call it as net.module.set_fix_method()"
        ),
    ),
    tags=("devices", "dataparallel", "attribute_error"),
    references=(
        # declined: DataParallel's own members would silently shadow the wrapped module's
        "https://github.com/pytorch/pytorch/pull/8071",
        "https://github.com/pytorch/pytorch/issues/16885",
        "https://github.com/pytorch/pytorch/issues/43329",  # the error with a custom method
    ),
)
