# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Tracing a module that keeps a trainable tensor as a plain attribute
#
# The model trains, and then `torch.jit.trace(model, example)` — or TensorBoard's
# `writer.add_graph(model, example)`, which traces it for you — stops with
# `RuntimeError: Cannot insert a Tensor that requires grad as a constant. Consider making it a
# parameter or input, or detaching the gradient`. The culprit is a tensor created with
# `requires_grad=True` and stored as `self.something = ...`: the model uses it, but it is not a
# parameter. On recent torch the same call also prints a deprecation warning saying that
# `torch.jit.trace` itself is deprecated — a separate message, unrelated to the error.

# %%
import warnings

import torch
from torch import nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A per-feature scale meant to be learned, created with `requires_grad=True` and assigned as an
# ordinary attribute.


# %%
class LooseScale(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.scale = torch.full((3,), 2.0, device=device, requires_grad=True)  # not registered

    def forward(self, x):
        return x * self.scale


def broken(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    return torch.jit.trace(LooseScale(device), x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # the RuntimeError, plus (from 2.10) torch.jit.trace's own deprecation warning

# %% [markdown]
# ## Why
# A trace records the operations run on the example input. Every tensor the forward touches
# must be either an input of the trace or a parameter/buffer of a traced module; anything else
# is frozen into the graph as a constant. A constant cannot carry a gradient, so when the
# tensor requires grad the tracer refuses rather than silently detach it from training. An
# attribute assigned as `self.scale = torch.tensor(..., requires_grad=True)` is invisible to
# `nn.Module`: it is not in `parameters()`, not in the optimizer unless added by hand, not moved
# by `.to()`, not saved in `state_dict()` — and, here, not something the tracer may bind to.
#
# The other message is not part of this pitfall. Recent releases emit, for every
# `torch.jit.trace` call, "torch.jit.trace is deprecated. Please switch to torch.compile or
# torch.export" (and one for `trace_method`), whether or not the module is correct. The version
# matrix (`reports/torch-*-cpu.json`) saw no such warning up to 2.9.1, a `DeprecationWarning`
# from 2.10.0 to 2.13.0 (matching trailofbits/fickling#254, which dates TorchScript's
# deprecation warnings to 2.10), and a `FutureWarning` — shown by default — from 2.14.1; the
# 2.14 change first showed up as this case's fix failing on the warning. It is the same warning
# for the broken and the fixed module, so this case does not count it: the symptom is the
# `RuntimeError` alone, and the fix silences that one deprecation message by its text, in
# either category — any other warning would still fail the fix.
#
# ## The fix
# Register the tensor: `nn.Parameter` if it is to be learned, `register_buffer` if it is state
# that should not be. The tracer then binds to it, and gradients still flow through the traced
# module to the very same parameter.


# %%
class Scale(nn.Module):
    def __init__(self, device):
        super().__init__()
        self.scale = nn.Parameter(torch.full((3,), 2.0, device=device))

    def forward(self, x):
        return x * self.scale


_TRACE_DEPRECATED = r"`torch\.jit\.trace(_method)?` is (deprecated|not supported)"


def fixed(device):
    module = Scale(device)
    x = torch.arange(6.0, device=device).reshape(2, 3)
    with warnings.catch_warnings():
        # Only torch.jit.trace's own deprecation notice is silenced: a DeprecationWarning on
        # 2.10-2.13, a FutureWarning from 2.14 (both seen by the version matrix).
        for category in (DeprecationWarning, FutureWarning):
            warnings.filterwarnings("ignore", message=_TRACE_DEPRECATED, category=category)
        traced = torch.jit.trace(module, x)
    out = traced(x)
    out.sum().backward()
    return out, module.scale.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The notes (S1) list this error in their troubleshooting section, met while building the model
# graph for TensorBoard, and mark it unresolved. Earlier in the same notes the author's own
# batch-norm module keeps `self.mean` and `self.var` as plain tensors with `requires_grad_()`
# and remarks that a module's state must be registered as a buffer or parameter to really
# belong to it — the fix, seen from the other side. TensorBoard's `add_graph` calls
# `torch.jit.trace` (`torch/utils/tensorboard/_pytorch_graph.py`), so the error surfaces
# there, as in the YOLOv3 report above.
#
# Upstream: in 2018 such tensors were silently traced as constants and lost their gradient
# (pytorch/pytorch#12946); PR #18298 (March 2019) turned that into this error, with the suggestion
# to make the tensor a parameter or an input; #55282 shows the same message on 1.8.1, and this
# corpus sees it on 2.13.0. The upper end is open, and may move: TorchScript is deprecated, and PR
# #189705 (open when this case was written) proposes to make the deprecation a hard error, after
# which `torch.jit.trace` would fail before reaching this check — the symptom above would then
# stop matching and the version matrix would flag it. Moving to `torch.export` does not remove the
# need for the fix: on 2.13.0 it accepts the unregistered tensor without a word and lifts it as a
# constant input of the exported program.

# %% [markdown]
# ## How the harness checks it
#
# `torch.jit.trace` refuses other modules with a `RuntimeError` too, and not every refusal is
# about an unregistered tensor. This one returns a Python number (`.item()`, a predicted class)
# instead of a tensor: the tracer can only record tensor outputs.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The tracer refuses the requires-grad attribute. The deprecation warning that recent torch
    emits for torch.jit.trace itself is not this symptom and is not checked here."""
    return run.raised(RuntimeError, r"requires grad as a constant")


class PredictsClass(nn.Module):
    def forward(self, x):
        return x.sum(dim=1).argmax().item()  # a Python int, not a tensor


def near_miss(device):
    x = torch.arange(6.0, device=device).reshape(2, 3)
    return torch.jit.trace(PredictsClass(), x)


def check(run, device):
    """By hand, for x = [[0, 1, 2], [3, 4, 5]]: every element doubled, and the gradient reaching
    the parameter is d(sum(x * s))/ds = the column sums of x = [3, 5, 7]."""
    out, scale_grad = run.value
    x = torch.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device)
    torch.testing.assert_close(out, 2.0 * x)
    torch.testing.assert_close(scale_grad, torch.tensor([3.0, 5.0, 7.0], device=device))


CASE = Case(
    id="jit-trace-grad-constant",
    title="Tracing a module that keeps a trainable tensor as a plain attribute",
    kind="error",
    symptom_category="error",
    symptom_line="torch.jit.trace raises: Cannot insert a Tensor that requires grad as a constant.",
    # The tracer raises since pytorch/pytorch#18298 (March 2019, so from 1.1); before it, such a
    # tensor was silently baked in as a constant (#12946). Observed on 2.13.0 by this corpus.
    affects=(
        Affects(
            ">=1.1",
            since="pytorch/pytorch#18298 added the error in March 2019; 1.1.0 (April 2019) "
            "is the first release after it",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "Troubleshooting: TensorBoard's graph fails with 'Cannot insert a Tensor that requires "
            "grad as a constant' (left unresolved)"
        ),
    ),
    tags=("autograd", "jit", "trace", "tensorboard", "parameters"),
    references=(
        "https://github.com/pytorch/pytorch/issues/12946",  # traced as a constant, silently
        "https://github.com/pytorch/pytorch/pull/18298",  # the error and its wording
        "https://github.com/pytorch/pytorch/issues/55282",  # the same error on 1.8.1
        "https://github.com/ultralytics/yolov3/issues/1795",  # met through tb_writer.add_graph
        "https://github.com/trailofbits/fickling/pull/254",  # TorchScript DeprecationWarnings in 2.10
        "https://github.com/pytorch/pytorch/pull/189705",  # proposal: TorchScript deprecation -> error
    ),
)
