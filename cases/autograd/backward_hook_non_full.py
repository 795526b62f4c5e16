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

from harness import Case, observe, seeded
from harness.sources import S1

CASE = Case(
    id="backward-hook-non-full",
    title="A module backward hook that sees only the module's last op",
    kind="silent",
    # The old hook has reported the last autograd node's gradients since the first releases
    # (pytorch/pytorch#598, January 2017); register_full_backward_hook (1.8) fixed it under a
    # new name and the old one was kept as it was. Observed on 2.13.0 by this corpus.
    affects=">=0.1",
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Hook': register_backward_hook on net.conv and net.fc1, printing grad shapes"),),
    tags=("autograd", "hooks", "module_hooks"),
    references=(
        "https://github.com/pytorch/pytorch/issues/598",  # grad_input belongs to the last Function
        "https://github.com/pytorch/pytorch/issues/7040",  # docs vs behaviour of grad_input
        "https://github.com/pytorch/pytorch/issues/12331",  # feedback on register_backward_hook
        "https://github.com/frgfm/torch-cam/issues/48",  # the warning, as a UserWarning, on 1.8.0
        "https://github.com/pytorch/pytorch/pull/127689",  # deprecation warnings made FutureWarning
    ),
)

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
    return {"hook_grad_input_shape": tuple(seen["grad_input"][0].shape), "input_shape": tuple(x.shape)}


def symptom(run):
    """The hook's grad_input does not even have the input's shape: it is the ReLU's, not the block's."""
    return run.error is None and run.value["hook_grad_input_shape"] != run.value["input_shape"]


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # returns shape (4, 2) for a (4, 3) input, and a FutureWarning

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
# deprecated …"). This case checks the wrong shape, not the warning: the warning was a
# `UserWarning` when it was introduced and is a `FutureWarning` on 2.13.0 (pytorch/pytorch#127689
# gave deprecation messages that category), while the wrong gradient is the same in every release.
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
    weight, bias = block.fc.weight.detach(), block.fc.bias.detach()
    active = ((x.detach() @ weight.T + bias) > 0).to(x.dtype)
    torch.testing.assert_close(seen["grad_input"][0], active @ weight)
    return seen["grad_input"][0]


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
# got a two-element `grad_input`, and the answer was that module hooks are registered on the
# last function the module created); #7040 and #12331 asked again for the documented meaning.
# PyTorch 1.8 added `register_full_backward_hook` and the warning above; the docs now call
# `register_backward_hook` deprecated "and the behavior of this function will change in future
# versions" — it has not changed as of 2.13.0, so the range is open above.
