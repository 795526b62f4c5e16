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
# You keep `device = torch.device("cuda")` in a config, while other code names the same GPU by
# its index (`f"cuda:{local_rank}"`, a `map_location`), and later you check
# `if device == other_device:` or `if x.device == device:` before an expensive copy, or write
# `assert p.device == device` in a test. On a one-GPU machine all these names refer to the same
# GPU, yet the comparison returns `False`. The assert fails, or the "already there" branch is
# never taken. A CUDA tensor makes it worse: it always reports `cuda:0`, never a bare `cuda`.

# %%
from typing import NamedTuple

import torch

from torch_pitfalls import observe

CONFIGURED = "cuda"  # how the config names the GPU: by its type alone
INDEXED = "cuda:0"  # how other code names the same GPU: by its index


class Compared(NamedTuple):
    """The two names of one GPU and whether they compared equal; and what a tensor made on the
    device under test (named by its type alone) reports, and whether it matched that name."""

    configured: torch.device
    indexed: torch.device
    names_equal: bool  # configured == indexed
    tensor_device: torch.device
    tensor_matches: bool  # tensor_device == the name the tensor was made with


# %% [markdown]
# ## The broken code
# The two names of the GPU are compared as they are. A `torch.device` is a plain value, so this
# part runs the same with or without a GPU. A tensor is also made on the device under test,
# named by its type alone, and its reported device is compared with that name.


# %%
def broken(device):
    configured, indexed = torch.device(CONFIGURED), torch.device(INDEXED)
    here = torch.device(torch.device(device).type)  # "cuda" or "cpu": no index
    x = torch.zeros(2, device=here)
    return Compared(configured, indexed, configured == indexed, x.device, x.device == here)


# %%
if __name__ == "__main__":
    # Without a GPU: names_equal=False, but tensor_matches=True (a CPU tensor reports a bare
    # "cpu"). On a GPU both are False: a CUDA tensor reports "cuda:0".
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A `torch.device` is a pair (type, index), and `==` compares both fields. `torch.device("cuda")`
# has index `None`, which means "whichever CUDA device is current when a tensor is made". It is a
# rule for choosing a device, not a particular device, so PyTorch does not treat it as equal to
# `cuda:0`, even when device 0 is the current one. Building and comparing the two objects touches
# no GPU, which is why a machine without one shows the comparison exactly as a GPU machine does. A
# CUDA tensor always knows its real device, so `x.device` reports `cuda:0` and never a bare
# `cuda`. CPU tensors instead report a bare `cpu`. This is why `x.device == torch.device(kind)`
# holds on the CPU and fails on a GPU.
#
# ## The fix
# Compare devices in the same form. Either compare only `.type` when the kind of device is what
# matters (as for the two names here), or resolve both names to the concrete device that torch
# would actually use. Making an empty tensor there is a portable way to do that, because it fills
# in the current index exactly as tensor creation does; it needs the device itself, so on a
# machine without a GPU only `.type` is left for a CUDA name.


# %%
def resolved(device):
    """The concrete device a tensor made on `device` lands on (a None index filled in)."""
    return torch.empty(0, device=device).device


def fixed(device):
    configured, indexed = torch.device(CONFIGURED), torch.device(INDEXED)
    here = torch.device(torch.device(device).type)
    x = torch.zeros(2, device=here)
    # The names by their type; the tensor's device against the name resolved the same way.
    return Compared(configured, indexed, configured.type == indexed.type, x.device, resolved(here) == x.device)


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
# unequal (the "names" form above, run without a GPU). Code inside torch meets the same mismatch:
# pytorch/pytorch#159665 made `torch.export` accept an expected `cuda` against a given `cuda:0`.
# `torch.device` came with 0.4; the upper end of `affects` is left open because no change is
# known.

# %% [markdown]
# ## How the harness checks it
#
# A device comparison that is `False` for another reason: comparing a `torch.device` with a
# *string*. `torch.device("cuda:0") == "cuda:0"` is `False` although both spell the same index,
# because a device object never equals a string. The fix there is `str(device)` or `.type`,
# not an index.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The bare name and the index-0 name of the same device type compare unequal ("names"); on
    a GPU, a tensor made there also fails to match the bare name it was made with ("names and
    tensor")."""
    if run.error is not None:
        return False
    seen = run.value
    two_names_of_one_gpu = (
        isinstance(seen.configured, torch.device)
        and isinstance(seen.indexed, torch.device)
        and seen.configured.type == seen.indexed.type
        and seen.configured.index is None
        and seen.indexed.index == 0
    )
    if not two_names_of_one_gpu or seen.names_equal:
        return False
    if seen.tensor_device.index is not None and not seen.tensor_matches:
        return "names and tensor"
    return "names"


def near_miss(device):
    configured, indexed = torch.device(INDEXED), INDEXED  # an object and a string
    here = torch.device(torch.device(device).type)
    x = torch.zeros(2, device=here)
    return Compared(configured, indexed, configured == indexed, x.device, x.device == here)


def check(run, device):
    """Both comparisons hold, and the tensor's device is the one written out by hand: a bare
    "cpu" on the CPU, the current index on a GPU (from `torch.cuda.current_device()`)."""
    seen = run.value
    assert seen.names_equal and seen.tensor_matches, seen
    kind = torch.device(device).type
    by_hand = torch.device("cpu") if kind == "cpu" else torch.device(kind, torch.cuda.current_device())
    assert seen.tensor_device == by_hand, (seen.tensor_device, by_hand)


CASE = Case(
    id="device-cuda-vs-cuda0",
    title='torch.device("cuda") is not equal to torch.device("cuda:0")',
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A device comparison is False for the same GPU: cuda is not equal to cuda:0.",
    # torch.device arrived in 0.4 and its equality has compared (type, index) since then, an
    # index of None included. The two names are plain values: comparing them needs no GPU, so a
    # machine without one shows the comparison itself. The tensor half (a CUDA tensor reports
    # "cuda:0") needs a GPU.
    # Upstream kept the behaviour (issue 115405, 2.0).
    affects=(
        Affects(">=0.4", since="the 0.4.0 release notes, which introduced torch.device", device="cpu", form="names"),
        Affects(
            ">=0.4",
            since="the 0.4.0 release notes, which introduced torch.device",
            device="cuda",
            form="names and tensor",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("Troubleshooting: device='cuda' uses card 0 by default, as if it were cuda:0"),),
    tags=("devices", "device", "equality"),
    references=(
        "https://github.com/pytorch/pytorch/issues/115405",  # "cuda" != "cuda:0", reported on 2.0
        # export had to special-case the same mismatch: expected "cuda", given "cuda:0"
        "https://github.com/pytorch/pytorch/pull/159665",
    ),
)
