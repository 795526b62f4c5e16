# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A module backward hook that sees only the module's last op
#
# You hook a block with `module.register_backward_hook(fn)` to look at the gradient flowing
# into it: `fn(module, grad_input, grad_output)`. For a layer made of one operation the
# numbers make sense. For a block that does two things — a linear layer then a ReLU — the
# `grad_input` you get is not the gradient with respect to the block's input at all: it has the
# shape of the *hidden* activation, because it belongs to the ReLU alone. Nothing fails; the
# only hint is a deprecation warning that is easy to scroll past.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A block `relu(linear(x))` maps 3 input features to 2 hidden ones. The hook records the first
# entry of `grad_input`, which should be d(loss)/d(input): shape `[4, 3]`.


# %%
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return torch.relu(self.fc(x))


def _block_and_input(device):
    with seeded(0):
        block = Block().to(device)
        x = torch.randn(4, 3, device=device, requires_grad=True)
    return block, x


def broken(device):
    block, x = _block_and_input(device)
    seen = {}
    block.register_backward_hook(lambda module, grad_in, grad_out: seen.update(grad_input=grad_in))
    block(x).sum().backward()
    return {"hook_grad_input": seen["grad_input"][0], "input_shape": tuple(x.shape)}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # a (4, 2) gradient for a (4, 3) input, and a FutureWarning

# %% [markdown]
# ## Why
# `register_backward_hook` predates any way of knowing where a module's computation starts.
# It attaches the hook to the autograd node that produced the module's output — the last op of
# `forward` — and hands it that node's gradients: here the ReLU's, so `grad_input` is the
# gradient with respect to the linear layer's output (shape `[4, 2]`), and the gradient with
# respect to the block's real input never reaches the hook. For a module that is a single op
# (`nn.Conv2d`, `nn.ReLU`) the two coincide, which is why the hook looks right in simple tests.
#
# Since 1.8 the old hook also warns when the forward contains more than one autograd node
# ("Using a non-full backward hook when the forward contains multiple autograd Nodes is
# deprecated …"). This case checks both: the wrong shape and that warning. The warning was a
# `UserWarning` when it was introduced and is a `FutureWarning` from 2.4 (pytorch/pytorch#126898,
# resubmitted after a revert as #127689, gave that category to deprecation warnings raised
# without one; in the 2.4.1 wheel the five non-full-hook warnings of `torch/nn/modules/module.py`
# pass `FutureWarning`, in 2.3.1 none does, and the version matrix sees the change between 2.3.1
# and 2.4.1), so the symptom names the category as its form. The wrong gradient is the same in every
# release; before 1.8 it came without any warning, which is outside the range claimed here.
#
# ## The fix
# `register_full_backward_hook` wraps the module's inputs and outputs in an autograd function of
# its own, so `grad_input` is the gradient with respect to what `forward` received. Check it
# against the chain rule written out: d(sum(relu(x Wᵀ + b)))/dx = 1[x Wᵀ + b > 0] · W.


# %%
def fixed(device):
    block, x = _block_and_input(device)
    seen = {}
    block.register_full_backward_hook(lambda module, grad_in, grad_out: seen.update(grad_input=grad_in))
    block(x).sum().backward()
    return {"hook_grad_input": seen["grad_input"][0], "input_shape": tuple(x.shape)}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The notes (S1), in their section on hooks, register a printing hook on `net.conv` and
# `net.fc1` with `register_backward_hook` and list the shapes of `grad_input` and
# `grad_output`; they also remark that a module's backward `i/o` may come as a list when it
# has several parameters. On a single-op layer this works; on a block it prints the last op's
# gradients, as here.
#
# The behaviour was reported in January 2017 (pytorch/pytorch#598: a module adding three inputs
# got a two-element `grad_input`, and the answer was that module hooks are registered on the last
# function the module created); #7040 and #12331 asked again for the documented meaning. PyTorch
# 1.8 added `register_full_backward_hook` and the warning above; the docs now call
# `register_backward_hook` deprecated "and the behavior of this function will change in future
# versions" — it has not changed as of 2.13.0, so the range is open above.

# %% [markdown]
# ## How the harness checks it
#
# A `FutureWarning` next to a hook gradient of the hidden shape is not always this pitfall. Here
# the full hook is used, but it records `grad_output` by mistake (the gradient at the block's
# output, also `[4, 2]`), and the warning is about the deprecated `weight_norm` in the block.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1

_NON_FULL = r"non-full backward hook when the forward contains multiple autograd Nodes"


def symptom(run):
    """Both halves: the hook's grad_input does not even have the input's shape (it is the ReLU's,
    not the block's), and torch warned about a non-full hook; the warning's category is the form."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    if tuple(run.value["hook_grad_input"].shape) == run.value["input_shape"]:
        return False
    for category in (FutureWarning, UserWarning):
        if run.warned(category, _NON_FULL):
            return category.__name__
    return False


def near_miss(device):
    block, x = _block_and_input(device)
    nn.utils.weight_norm(block.fc)  # warns: deprecated in favour of parametrizations.weight_norm
    seen = {}
    block.register_full_backward_hook(lambda module, grad_in, grad_out: seen.update(grad_output=grad_out))
    block(x).sum().backward()
    return {"hook_grad_input": seen["grad_output"][0], "input_shape": tuple(x.shape)}  # taken for grad_input


def check(run, device):
    """The hook's grad_input is d(sum(relu(x Wᵀ + b)))/dx = 1[x Wᵀ + b > 0] · W, the chain rule
    written out from the block's weights (same seed), not taken from autograd."""
    block, x = _block_and_input(device)
    weight, bias = block.fc.weight.detach(), block.fc.bias.detach()
    active = ((x.detach() @ weight.T + bias) > 0).to(x.dtype)
    torch.testing.assert_close(run.value["hook_grad_input"], active @ weight)


CASE = Case(
    id="backward-hook-non-full",
    title="A module backward hook that sees only the module's last op",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A backward hook on a block reports the gradient of its last op only, with a hidden-layer shape.",
    # The catalogue row is "silent + warning": the wrong gradient and, since 1.8, a deprecation
    # warning whose category changed in 2.4 (the version matrix: UserWarning up to 2.3.1,
    # FutureWarning from 2.4.1). The old hook has reported the last autograd node's gradients
    # since the first releases (pytorch/pytorch#598, January 2017); this symptom also asks for
    # the warning, so its range starts where the warning does. Upper end open.
    affects=(
        Affects(
            versions=">=2.4",
            form="FutureWarning",
            reason="the last op's grad_input, and the deprecation warned as a FutureWarning (observed from 2.4.1)",
            issue="https://github.com/pytorch/pytorch/pull/126898",
        ),
        Affects(
            versions=">=1.8,<2.4",
            since="register_full_backward_hook and this warning came with 1.8.0; frgfm/torch-cam#48 quotes "
            "it as a UserWarning on 1.8.0",
            form="UserWarning",
            reason="the last op's grad_input, and the deprecation warned as a UserWarning (observed 1.13.1 to 2.3.1)",
            issue="https://github.com/frgfm/torch-cam/issues/48",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Hook': register_backward_hook on net.conv and net.fc1, printing grad shapes"),),
    tags=("autograd", "hooks", "module_hooks"),
    references=(
        "https://github.com/pytorch/pytorch/issues/598",  # grad_input belongs to the last Function
        "https://github.com/pytorch/pytorch/issues/7040",  # docs vs behaviour of grad_input
        "https://github.com/pytorch/pytorch/issues/12331",  # feedback on register_backward_hook
        "https://github.com/frgfm/torch-cam/issues/48",  # the warning, as a UserWarning, on 1.8.0
        "https://github.com/pytorch/pytorch/pull/126898",  # deprecation warnings made FutureWarning (2.4)
        "https://github.com/pytorch/pytorch/pull/127689",  # the same change resubmitted after #126898's revert
    ),
)
