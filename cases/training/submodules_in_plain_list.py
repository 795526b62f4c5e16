# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Layers kept in a plain Python list
#
# The number of layers is a hyperparameter, so `__init__` builds them in a loop and keeps
# them in `self.blocks = [...]`. The forward pass iterates over the list and the model
# produces outputs and a falling loss. But `print(model)` shows only the head,
# `model.parameters()` does not contain the blocks, so the optimizer never updates them;
# `model.to("cuda")` leaves them on the CPU (a device error at the first batch on a GPU) and
# `model.state_dict()` does not save them, so a reloaded model gets fresh random blocks.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Three hidden blocks in a list, a head, twenty SGD steps. The layers are created directly on
# the device (`device=`), so the forward pass runs anywhere. Afterwards the model is converted
# with `.double()`: a dtype conversion goes through the same machinery as `.to("cuda")`, so it
# shows what a move would leave behind, on any device.

# %%
DEPTH = 3
STEPS = 20
LR = 0.1


class Tower(nn.Module):
    def __init__(self, container, device):
        super().__init__()
        self.blocks = container(nn.Linear(4, 4, device=device) for _ in range(DEPTH))
        self.head = nn.Linear(4, 1, device=device)

    def forward(self, x):
        for block in self.blocks:
            x = torch.relu(block(x))
        return self.head(x)


def setup(container, device):
    with seeded(0):
        model = Tower(container, device)
        x = torch.randn(16, 4)
        y = torch.randn(16, 1)
    return model, x.to(device), y.to(device)


def train_and_describe(container, device):
    model, x, y = setup(container, device)
    before = [b.weight.detach().clone() for b in model.blocks]
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    output = model(x).detach()
    model.double()
    return {
        "parameters": len(list(model.parameters())),
        "state_dict": sorted(model.state_dict()),
        "blocks_unchanged": [torch.equal(b.weight.float(), w) for b, w in zip(model.blocks, before)],
        "block_dtype_after_double": str(model.blocks[0].weight.dtype),
        "output": output,
    }


def broken(device):
    return train_and_describe(list, device)  # a plain Python list


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# An `nn.Module` keeps track of its children through `__setattr__`: assigning a `Module` to
# an attribute files it in the module's `_modules` registry, and everything that walks the
# model (`parameters()`, `named_modules()`, `state_dict()`, `load_state_dict()`, `.to()`,
# `.cuda()`, `.double()`, `.train()`, `.eval()`, `print`) walks that registry. A Python list
# is not a `Module`, so `self.blocks = [...]` stores an ordinary attribute, and the linear
# layers inside it are invisible to all of those walks. The forward pass does not care: it
# calls the layers directly, so outputs are computed and even gradients reach the blocks'
# weights, but the optimizer was given `model.parameters()`, which lists only the head, so
# the blocks keep their initial weights. The head trains on top of three fixed random layers,
# and the loss still falls a little. A `dict` of layers has the same problem.
#
# ## The fix
# Use the registering containers: `nn.ModuleList` for a list of layers (or `nn.Sequential`
# when they are applied in order, and `nn.ModuleDict` for a dict). They are modules themselves,
# so their contents are registered under names like `blocks.0.weight`.


# %%
def fixed(device):
    return train_and_describe(nn.ModuleList, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# It has been reported against PyTorch itself many times, and closed each time as expected
# behaviour with the advice to use `nn.ModuleList`: pytorch/pytorch#666 ("nn.Module not
# importing parameters contained in lists", 2017, pointing to the forum thread on lists of
# modules), #1053 (submodules in a list stay on the CPU after `.cuda()`), #8017 (parameters
# not moved by `Module.to()`) and #15005 (`model.cuda()` does not see layers initialised in a
# list). The `nn.ModuleList` documentation states the difference: its modules are registered
# and visible to all `Module` methods. No release changed it.

# %% [markdown]
# ## How the harness checks it
# Blocks that do not change are not always unregistered. Registered blocks that were frozen
# on purpose (`requires_grad_(False)`) keep their weights too, but they are listed by
# `parameters()`, saved in the state dict and converted by `.double()`. The symptom requires
# the blocks to be missing from the state dict and left in float32, so it refuses them.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Only the head is registered: two parameters, a state dict with the head alone, blocks
    that never changed and that .double() left in float32."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["parameters"] == 2
        and v["state_dict"] == ["head.bias", "head.weight"]
        and all(v["blocks_unchanged"])
        and v["block_dtype_after_double"] == "torch.float32"
    )


def near_miss(device):
    model, x, y = setup(nn.ModuleList, device)
    model.blocks.requires_grad_(False)  # registered, frozen on purpose
    before = [b.weight.detach().clone() for b in model.blocks]
    opt = torch.optim.SGD([p for p in model.parameters() if p.requires_grad], lr=LR)
    for _ in range(STEPS):
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    output = model(x).detach()
    model.double()
    return {
        "parameters": len(list(model.parameters())),
        "state_dict": sorted(model.state_dict()),
        "blocks_unchanged": [torch.equal(b.weight.float(), w) for b, w in zip(model.blocks, before)],
        "block_dtype_after_double": str(model.blocks[0].weight.dtype),
        "output": output,
    }


def check(run, device):
    """The registry holds what was built, counted by hand: DEPTH blocks of (weight, bias) plus
    the head; every block trained; .double() converted them; and the output equals the same
    network trained by hand with plain gradient descent on its functional form."""
    v = run.value
    expected_keys = sorted(
        [f"blocks.{i}.{t}" for i in range(DEPTH) for t in ("weight", "bias")] + ["head.bias", "head.weight"]
    )
    assert v["state_dict"] == expected_keys, v["state_dict"]
    assert v["parameters"] == 2 * DEPTH + 2, v["parameters"]
    assert not any(v["blocks_unchanged"]), v["blocks_unchanged"]
    assert v["block_dtype_after_double"] == "torch.float64", v["block_dtype_after_double"]
    model, x, y = setup(nn.ModuleList, device)
    params = [p.detach().clone().requires_grad_() for p in model.parameters()]

    def net(inp):
        for i in range(DEPTH):
            inp = torch.relu(F.linear(inp, params[2 * i], params[2 * i + 1]))
        return F.linear(inp, params[-2], params[-1])

    for _ in range(STEPS):
        grads = torch.autograd.grad(((net(x) - y) ** 2).mean(), params)
        with torch.no_grad():
            for p, g in zip(params, grads):
                p -= LR * g
    with torch.no_grad():
        torch.testing.assert_close(v["output"], net(x), rtol=1e-4, atol=1e-5)


def stable(value):
    """Keep the structure; the trained output varies in its last digits between releases."""
    return {k: value[k] for k in ("parameters", "state_dict", "blocks_unchanged", "block_dtype_after_double")}


CASE = Case(
    id="submodules-in-plain-list",
    title="Layers kept in a plain Python list",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Layers kept in a Python list are not in parameters() or state_dict(): they never train.",
    # Module registration has only ever looked at attributes that are Modules or Parameters;
    # the maintainers closed the reports as expected behaviour from 2017 on.
    affects=(Affects("*", reason="nn.Module registration behaves the same on every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#666: nn.Module not importing parameters contained in lists",
            url="https://github.com/pytorch/pytorch/issues/666",
        ),
        Source(
            title="pytorch/pytorch#8017: failed to move parameters to GPU (layers built in a loop, kept in a list)",
            url="https://github.com/pytorch/pytorch/issues/8017",
        ),
        Source(
            title="PyTorch docs: torch.nn.ModuleList",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.ModuleList.html",
        ),
    ),
    tags=("training", "nn_module", "modulelist", "state_dict"),
    references=(
        "https://github.com/pytorch/pytorch/issues/1053",
        "https://github.com/pytorch/pytorch/issues/15005",
        "https://discuss.pytorch.org/t/list-of-nn-module-in-a-nn-module/219",
    ),
)
