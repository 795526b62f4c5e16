# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A full backward hook on a layer whose input needs no gradient now warns
#
# A Grad-CAM style tool, a gradient logger or a privacy library records the gradient flowing
# out of a layer with `layer.register_full_backward_hook(hook)` and reads `grad_output` in the
# hook. When the layer is the first one of the model, its input is a data batch that does not
# require a gradient. On 1.13 to 2.7 the hook fires quietly (with `grad_input == (None,)`).
# After an upgrade to 2.8 every backward pass prints `UserWarning: Full backward hook is firing
# when gradients are computed with respect to module outputs since no inputs require
# gradients`. The gradient it receives is unchanged.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code


# %%
def _layer_and_batch(device):
    with seeded(0):
        layer = nn.Linear(3, 2).to(device)
    batch = torch.tensor([[1.0, 2.0, 3.0]], device=device)  # data: requires_grad is False
    weights = torch.tensor([[2.0, -1.0]], device=device)  # d(loss)/d(output)
    return layer, batch, weights


def broken(device):
    layer, batch, weights = _layer_and_batch(device)
    seen = []
    handle = layer.register_full_backward_hook(
        lambda module, grad_input, grad_output: seen.append(grad_output[0].detach().clone())
    )
    (layer(batch) * weights).sum().backward()
    handle.remove()
    return seen[0]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A full backward hook is meant to run once the gradients with respect to the module's inputs
# are known, and it receives them as `grad_input`. When no input requires a gradient, there is
# nothing to wait for, so since pytorch/pytorch#56693 (1.9) it fires as soon as the gradient
# with respect to the outputs exists, with `grad_input` all `None`. That ordering surprised users
# (pytorch/pytorch#100528), the docs were amended (pytorch/pytorch#151785), and
# pytorch/pytorch#155339 added a warning for 2.8 each time the hook fires this way.
#
# ## The fix
# If the hook only needs the gradient of the layer's output, take it from the output tensor:
# a forward hook registers a tensor hook on the output, which fires with that gradient on every
# release and warns nowhere. (`register_full_backward_pre_hook` receives only `grad_output`, but
# it appeared in 2.0, and it printed the same warning from 2.8.0 to at least 2.13.0 (quiet
# again on 2.15.0): pytorch/pytorch#189093.) The check compares the gradient with `weights`, the derivative of
# the loss with respect to the output, written by hand.


# %%
def fixed(device):
    layer, batch, weights = _layer_and_batch(device)
    seen = []

    def keep_output_grad(module, inputs, output):
        output.register_hook(lambda grad: seen.append(grad.detach().clone()))

    handle = layer.register_forward_hook(keep_output_grad)
    (layer(batch) * weights).sum().backward()
    handle.remove()
    return seen[0]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#155339 ("Add warning for module full backward hook when no input requires
# gradient", June 2025) added the warning to `torch.utils.hooks.BackwardHook`; 2.8.0 is the
# first release with it (`python -m torch_pitfalls.surface diff` lists it as new in `utils.hooks`
# between 2.7.1 and 2.8.0; this project did not locate its line in the 2.8.0 notes). Any hook
# on a model's first layer meets it, since data batches do not require gradients: tinygrad's
# torch backend replaced its full backward hook with parameter hooks because of it
# (tinygrad/tinygrad#12575), and pytorch/pytorch#189093 reports it firing even for
# `register_full_backward_pre_hook`. Observed with this project's venvs: quiet on 1.13.1 and
# 2.7.1, a `UserWarning` on 2.8.0, 2.9.1, 2.10.0, 2.13.0, 2.14.1 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# The older `register_backward_hook` (without "full") warns too, on every release, when the
# module's forward holds several autograd nodes: another hook warning, about the old API
# missing part of `grad_input`, not about inputs that need no gradient.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The hook's warning that it fired from the outputs because no input needs a gradient."""
    return run.warned(UserWarning, r"full backward hook is firing .*no inputs require grad")


def near_miss(device):
    with seeded(0):
        block = nn.Sequential(nn.Linear(3, 2), nn.ReLU()).to(device)
    x = torch.ones(1, 3, device=device, requires_grad=True)
    handle = block.register_backward_hook(lambda module, grad_input, grad_output: None)
    block(x).sum().backward()
    handle.remove()
    return x.grad


def check(run, device):
    """The gradient reaching the output is the weights [[2, -1]] of the loss, and nothing
    warned: the full hook receives the same gradient, so the missing warning tells the fix
    apart."""
    torch.testing.assert_close(run.value, torch.tensor([[2.0, -1.0]], device=device))
    assert not run.warnings, f"the hook warned: {run.warnings[0].message}"


CASE = Case(
    id="full-backward-hook-no-input-grad",
    title="A full backward hook on a layer whose input needs no gradient now warns",
    kind="warning",
    symptom_category="warning",
    symptom_line="A full backward hook on the first layer starts to warn after an upgrade past 2.7.",
    affects=(
        Affects(
            versions=">=2.8",
            reason="BackwardHook warns when it has to fire from the output side (observed 2.8.0 to "
            "2.15.0; quiet on 1.13.1 and 2.7.1)",
            issue="https://github.com/pytorch/pytorch/pull/155339",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.8.0").at(
            "the release that first ships pytorch/pytorch#155339, the warning of full backward hooks fired from the module outputs"
        ),
    ),
    tags=("upgrade", "hooks", "autograd"),
    references=(
        "https://github.com/pytorch/pytorch/issues/100528",  # the output-side firing, reported as surprising
        "https://github.com/pytorch/pytorch/pull/155339",  # the warning
        "https://github.com/tinygrad/tinygrad/pull/12575",  # downstream: tinygrad's torch backend moved off the hook
        "https://github.com/pytorch/pytorch/issues/189093",  # the same warning from a pre-hook
    ),
)
