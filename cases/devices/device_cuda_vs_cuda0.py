# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.device("cuda")` is not equal to `torch.device("cuda:0")`
#
# You keep `device = torch.device("cuda")` in a config and later check `if x.device == device:`
# before an expensive copy, or `assert p.device == device` in a test. On a one-GPU machine both
# names refer to the same GPU, yet the comparison returns `False`. The assert fails, or the
# "already there" branch is never taken. The code worked on the CPU, where tensors report a bare
# `cpu` and the same comparison happens to succeed.

# %%
from typing import NamedTuple

import torch

from harness import Case, observe
from harness.sources import S1

CASE = Case(
    id="device-cuda-vs-cuda0",
    title='torch.device("cuda") is not equal to torch.device("cuda:0")',
    kind="silent",
    # torch.device arrived in 0.4 and its equality has compared (type, index) since then, an
    # index of None included. Reproduced on 2.13.0 with "cpu" vs "cpu:0"; the "cuda" form was not
    # observed by this project's runs. Upstream kept the behaviour (issue 115405, 2.0).
    affects=">=0.4",
    devices=("cpu", "cuda"),
    sources=(S1.at("Troubleshooting: device='cuda' uses card 0 by default, as if it were cuda:0"),),
    tags=("devices", "device", "equality"),
    references=(
        "https://github.com/pytorch/pytorch/issues/115405",  # "cuda" != "cuda:0", reported on 2.0
        # export had to special-case the same mismatch: expected "cuda", given "cuda:0"
        "https://github.com/pytorch/pytorch/pull/159665",
    ),
)


class Compared(NamedTuple):
    """The device as configured, the same device with its index, and what a tensor reports."""

    configured: torch.device
    indexed: torch.device
    tensor_device: torch.device
    names_equal: bool  # configured == indexed
    tensor_matches_config: bool  # tensor_device == configured


# %% [markdown]
# ## The broken code
# The device is configured by its type alone, then compared with the indexed name of the same
# device. A tensor is placed there too, and its reported device is compared with the configured one.

# %%
def broken(device):
    kind = torch.device(device).type
    configured = torch.device(kind)  # "cuda": no index
    indexed = torch.device(kind, 0)  # "cuda:0"
    x = torch.zeros(2, device=configured)
    return Compared(
        configured, indexed, x.device, configured == indexed, x.device == configured
    )


def symptom(run):
    """The two names of one device compare unequal."""
    return run.error is None and not run.value.names_equal


# %%
if __name__ == "__main__":
    # On a CPU: names_equal=False, but tensor_matches_config=True (a CPU tensor reports a bare
    # "cpu"). On a GPU both are False: a CUDA tensor reports "cuda:0".
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A `torch.device` is a pair (type, index), and `==` compares both fields. `torch.device("cuda")`
# has index `None`, which means "whichever CUDA device is current when a tensor is made". It is a
# rule for choosing a device, not a particular device, so PyTorch does not treat it as equal to
# `cuda:0`, even when device 0 is the current one. A CUDA tensor always knows its real device,
# so `x.device` reports `cuda:0` and never a bare `cuda`. CPU tensors instead report a bare `cpu`.
# This is why `x.device == torch.device(kind)` holds on the CPU and fails on a GPU. The same
# rule makes `torch.device("cpu") != torch.device("cpu:0")`, which is the form a machine without a
# GPU shows. The CUDA side was not observed by this project's runs, which had no GPU.
#
# ## The fix
# Compare devices in the same form. Either compare only `.type` when the kind of device is what
# matters, or resolve both names to the concrete device that torch would actually use. Making an
# empty tensor there is a portable way to do that, because it fills in the current index exactly
# as tensor creation does.

# %%
def resolved(device):
    """The concrete device a tensor made on `device` lands on (a None index filled in)."""
    return torch.empty(0, device=device).device


def fixed(device):
    kind = torch.device(device).type
    configured, indexed = torch.device(kind), torch.device(kind, 0)
    x = torch.zeros(2, device=configured)
    assert configured.type == indexed.type == x.device.type
    assert resolved(configured) == resolved(indexed) == x.device
    # Written out by hand: a CPU tensor reports a bare "cpu", a CUDA one the current index.
    by_hand = torch.device("cpu") if kind == "cpu" else torch.device(kind, torch.cuda.current_device())
    assert resolved(configured) == by_hand, (resolved(configured), by_hand)
    return resolved(configured)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes say that `device='cuda'` uses card 0 by default, "equivalent to `cuda:0`", and
# that to use another card as the main one you name it (`cuda:2`) and `.to(device)`. That
# is true of where tensors land when device 0 is current, but the two names are not equal as
# objects. pytorch/pytorch#115405 reported `torch.device("cuda") == torch.device("cuda:0")` being
# `False` on 2.0. The maintainers answered that the indices differ (None vs 0) and that a missing
# index means the current device, not device 0. The issue is closed, and 2.13.0 still compares them
# unequal (the CPU form above). Code inside torch meets the same mismatch:
# pytorch/pytorch#159665 made `torch.export` accept an expected `cuda` against a given `cuda:0`.
# `torch.device` came with 0.4; the upper end of `affects` is left open because no change is
# known.
