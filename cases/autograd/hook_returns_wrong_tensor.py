# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A gradient hook that returns `torch.zeros(grad.shape)`
#
# To freeze some parameters you register a hook that replaces their gradient with zeros:
# `param.register_hook(lambda grad: torch.zeros(grad.shape))`. It works in a float32 model on
# the CPU. Move the model to the GPU, or make it float64 (as you must for `gradcheck`), and
# `loss.backward()` stops with `RuntimeError: hook '<lambda>' has changed the type of value`.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A float64 linear layer; the hook on its bias means "no gradient for the bias".


# %%
def _layer_and_input(device):
    with seeded(0):
        layer = nn.Linear(3, 2).to(device=device, dtype=torch.float64)
        x = torch.randn(4, 3, device=device, dtype=torch.float64)
    return layer, x


def broken(device):
    layer, x = _layer_and_input(device)
    layer.bias.register_hook(lambda grad: torch.zeros(grad.shape))  # float32, on the CPU
    layer(x).sum().backward()
    return layer.bias.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.zeros(shape)` knows nothing about `grad` but its shape: it makes a tensor of the
# default dtype (float32) on the default device (the CPU). Autograd uses whatever a hook returns
# in place of the gradient, so it first checks that the replacement could stand in for it —
# same type, same device, same size — and raises otherwise, naming the two types
# (`was torch.DoubleTensor got torch.FloatTensor` here). In a float32 CPU model the
# zeros happen to match, which is why the hook looks correct until the model moves.
#
# On CUDA the mismatch is the device as well: the gradient is a CUDA tensor and the zeros are not,
# so even a float32 model fails, with the CUDA type named in the message. A float32 model was not
# run on CUDA; that it fails too follows from the same check.
#
# ## The fix
# Build the replacement from the gradient itself: `torch.zeros_like(grad)` copies its dtype,
# device and layout (so does `grad * 0`, or `grad.new_zeros(grad.shape)`).


# %%
def fixed(device):
    layer, x = _layer_and_input(device)
    layer.bias.register_hook(lambda grad: torch.zeros_like(grad))
    layer(x).sum().backward()
    return layer.bias.grad, layer.weight.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The notes (S1), in their section on hooks, show how to zero the gradient of every bias of the
# `fc` layers with exactly `lambda grad: torch.zeros(grad.shape)`; the notes are about training
# on GPUs (several sections cover multi-GPU training), where that line raises. The docs of
# `Tensor.register_hook` say a hook "can optionally return a new gradient which will be used in
# place of grad" — the check that the new gradient matches the old one's type and device is
# in autograd's C++ (`check_variable_result`, present in pre-1.0 sources already), so the range
# is left open below; nothing suggests it will be relaxed.

# %% [markdown]
# ## How the harness checks it
#
# The same check also refuses a hook whose result has the right type but the wrong *size*: here
# the hook keeps only the first element of the gradient (a slice meant for something else).
# That is another bug, with another message; `zeros_like` has nothing to do with it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """backward() refuses the hook's result: its type (dtype, and on a GPU the device) is not the grad's."""
    return run.raised(RuntimeError, r"hook .* has changed the type of value")


def near_miss(device):
    layer, x = _layer_and_input(device)
    layer.bias.register_hook(lambda grad: grad[:1])  # float64, on the right device, size 1 not 2
    layer(x).sum().backward()
    return layer.bias.grad


def check(run, device):
    """The hook zeroed the bias gradient (float64 zeros); the weight's, d(sum(x Wᵀ + b))/dW, is
    the batch sum of the same seeded x in every row, written out by hand."""
    bias_grad, weight_grad = run.value
    _, x = _layer_and_input(device)
    torch.testing.assert_close(bias_grad, torch.zeros(2, device=device, dtype=torch.float64))
    torch.testing.assert_close(weight_grad, x.sum(dim=0).expand(2, 3))


CASE = Case(
    id="hook-returns-wrong-tensor",
    title="A gradient hook that returns torch.zeros(grad.shape)",
    kind="error",
    symptom_category="error",
    symptom_line="A gradient hook raises that it has changed the type of value, on GPU or in float64.",
    # Autograd has checked a hook's result against the gradient it replaced (type, device, size)
    # since before 1.0, so no lower bound is known; observed on 2.13.0 by this corpus. No release
    # is known to relax it.
    affects="*",
    # The catalogue row is "CUDA (dtype on CPU)": on a GPU any dtype fails, on the CPU a
    # non-default dtype does. This case uses float64 so that both devices show it.
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Hook': zeroing the fc biases' grads with lambda grad: torch.zeros(grad.shape)"),),
    tags=("autograd", "hooks", "dtype", "device"),
    references=("https://docs.pytorch.org/docs/stable/generated/torch.Tensor.register_hook.html",),
)
