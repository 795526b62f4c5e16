# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Weights initialised from NumPy are float64
#
# You initialise a layer by hand with NumPy, `layer.weight.data =
# torch.from_numpy(np.random.normal(0, 0.5, size=shape))`, and the first forward pass fails
# with `RuntimeError: self and mat2 must have the same dtype, but got Float and Double` (other
# releases word it `expected m1 and m2 to have the same dtype, but got: float != double` or
# `expected scalar type Float but found Double`). The input is an ordinary float32
# batch; the weight quietly became float64.

# %%
import numpy as np
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# The post's recipe, with a local NumPy generator instead of the global one.


# %%
def broken(device):
    rng = np.random.default_rng(0)
    with seeded(0):
        layer = nn.Linear(3, 2).to(device)
    layer.weight.data = torch.from_numpy(rng.normal(0, 0.5, size=(2, 3))).to(device)
    x = torch.tensor([[1.0, 2.0, 3.0]], device=device)  # float32, like every batch
    return layer(x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# NumPy's default floating dtype is float64, and `torch.from_numpy` keeps the array's dtype
# (it shares its memory, so it cannot convert). Assigning to `.data` replaces the parameter's
# tensor wholesale, dtype included, without any check; `module.to(device)` moves it but keeps
# it float64. The matrix multiply inside `F.linear` needs both operands in one dtype and does
# not promote, so the float32 input and the float64 weight meet in an error. The bias is still
# float32, which makes the module a mixture that `model.float()` would also repair.
#
# ## The fix
# Let torch own the dtype. Either initialise with `torch.nn.init.normal_(layer.weight, 0, 0.5)`,
# or, when the values must come from NumPy, copy them into the existing parameter with
# `layer.weight.copy_(...)` under `torch.no_grad()`: `copy_` converts to the parameter's dtype
# and device and keeps the parameter object the optimizer already holds. (`torch.from_numpy(w)
# .float()` also works, but `.data =` still bypasses every check.)


# %%
def fixed(device):
    rng = np.random.default_rng(0)
    w = rng.normal(0, 0.5, size=(2, 3))  # float64, as before
    with seeded(0):
        layer = nn.Linear(3, 2).to(device)
    with torch.no_grad():
        layer.weight.copy_(torch.from_numpy(w))  # converted into the float32 parameter
    x = torch.tensor([[1.0, 2.0, 3.0]], device=device)
    return layer(x)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes close with an initialisation recipe that loops over the linear layers and sets
# `layer.weight.data = torch.from_numpy(np.random.normal(0, 0.5, size=param_shape))`: exactly the
# float64 weight above. Type promotion (pytorch/pytorch#22273, 1.3) made *elementwise* ops accept
# mixed dtypes; matrix products still require one dtype. Only the wording of the message has
# changed between releases and devices (the forms quoted at the top all turn up in public bug
# reports). The version matrix saw it change: on 1.13.1 and 2.0.1 the CPU message is "self and
# mat2 must have the same dtype" with no dtype named; from 2.1.2 it adds "but got Float and
# Double". So the symptom matches the error type and key words ("same dtype", and Double wherever
# the dtypes are named), never the sentence.

# %% [markdown]
# ## How the harness checks it
#
# Another dtype error of the same type, and not this pitfall: looking rows up with an index
# tensor that is float (class ids read from a float column) also raises a RuntimeError about a
# dtype, from `index_select`. Nothing there is float64, and nothing came from NumPy.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The forward pass refuses to multiply the float32 input by the float64 weight."""
    # The wording changed across releases: "self and mat2 must have the same dtype" (CPU, 1.13.1
    # and 2.0.1), "..., but got Float and Double" (CPU from 2.1.2; CUDA on 2.11.0, the one CUDA
    # release observed), "expected m1 and m2 to have the same dtype, but got: float != double"
    # and "expected scalar type Float but found Double" (other releases; not observed here). Key words: "same dtype" or "expected scalar type", and,
    # wherever the message names the dtypes, Double among them.
    if not run.raised(RuntimeError, r"same dtype|expected scalar type"):
        return False
    names_dtypes = run.raised(RuntimeError, r"but (got|found)")
    return not names_dtypes or run.raised(RuntimeError, r"double")


def near_miss(device):
    table = torch.eye(3, device=device)
    ids = torch.tensor([0.0, 2.0], device=device)  # float ids: index_select wants int64
    return table.index_select(0, ids)


def check(run, device):
    """A float32 output equal to y = x W^T + b computed in NumPy (float64), with W drawn again
    from the same NumPy generator and b from a layer built under the same seed."""
    w = np.random.default_rng(0).normal(0, 0.5, size=(2, 3))
    with seeded(0):
        b = nn.Linear(3, 2).bias.detach().numpy().astype(np.float64)
    expected = np.array([[1.0, 2.0, 3.0]]) @ w.T + b
    assert run.value.dtype == torch.float32
    torch.testing.assert_close(run.value.detach().cpu(), torch.from_numpy(expected).float())


CASE = Case(
    id="numpy-float64-weights",
    title="Weights initialised from NumPy are float64",
    kind="error",
    symptom_category="error",
    symptom_line="The first forward raises that Float and Double do not match: the weights came from NumPy.",
    # Observed on every release of the version matrix (1.13.1 to 2.15.0, reports/). Matrix
    # products have never promoted mixed dtypes (type promotion, 1.3, covers elementwise ops),
    # so no release is known without it: no lower bound.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S1.at("the closing 'common operations': init by hand with torch.from_numpy(np.random.normal(...))"),),
    tags=("dtypes", "numpy", "float64", "initialization"),
    references=(
        "https://github.com/pytorch/pytorch/pull/22273",  # promotion is for elementwise ops only
    ),
)
