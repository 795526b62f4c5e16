# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Validation without `torch.no_grad()`
#
# Training fits in memory, but the validation pass after the epoch, which only runs the
# forward, runs out of memory or is slower than it should be. The model was switched to
# `model.eval()`, so it looks like inference; yet every output still carries a `grad_fn`,
# and behind it autograd has kept each layer's activations for a backward that never comes.

# %%
import torch
import torch.nn as nn

from torch_pitfalls import observe, saved_bytes, seeded

# %% [markdown]
# ## The broken code
# A small classifier in eval mode and one validation batch. `saved_bytes` (a harness helper
# built on `torch.autograd.graph.saved_tensors_hooks`) counts the bytes autograd stores for a
# backward pass while the forward runs.

# %%
BATCH, WIDTH, HIDDEN, CLASSES = 32, 64, 256, 10


def make_model_and_batch(device, batch=BATCH, width=WIDTH, hidden=HIDDEN):
    with seeded(0):
        model = nn.Sequential(nn.Linear(width, hidden), nn.ReLU(), nn.Linear(hidden, CLASSES))
        x = torch.randn(batch, width)
    return model.to(device).eval(), x.to(device)


def validate(model, x):
    """The validation forward as it is usually first written."""
    return model(x)


def validate_no_grad(model, x):
    """The same forward with gradient recording off."""
    with torch.no_grad():
        return model(x)


def broken(device):
    model, x = make_model_and_batch(device)
    out, held = saved_bytes(validate, model, x)
    return {"saved_bytes": held, "has_grad_fn": out.grad_fn is not None, "out": out.detach()}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `model.eval()` only flips the `training` flag that layers such as Dropout and BatchNorm
# read; it says nothing to autograd. The parameters still have `requires_grad=True`, so every
# operation on them is recorded, and each recorded operation saves what its backward will
# need: here the input batch (for the first weight's gradient), the ReLU output, the hidden
# activation and the second weight, 83,968 bytes for this tiny model (8,192 + 32,768 +
# 32,768 + 10,240), growing with batch size and depth. They stay alive as long as the output
# does, and building the graph costs time on every batch.
#
# ## The fix
# Run validation under `with torch.no_grad():` (or `torch.inference_mode()`, which also
# skips the bookkeeping that lets a tensor be used in autograd later). Nothing is saved and
# the output has no `grad_fn`; the values are the same, checked against the network written
# out by hand. `model.eval()` is still needed: it is the other half (see `train-eval-mode`).


# %%
def fixed(device):
    model, x = make_model_and_batch(device)
    out, held = saved_bytes(validate_no_grad, model, x)
    return {"saved_bytes": held, "has_grad_fn": out.grad_fn is not None, "out": out}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post advises turning gradients off for validation and testing: only the forward is
# needed, keeping what backward needs costs memory, and can end in an out-of-memory error in the
# validation phase. It notes that `torch.no_grad()` is the way from 0.4 on, and that older code
# used `volatile=True` on `Variable`s, which 0.4 deprecated (the 0.4.0 release notes and migration
# guide). The mechanism is asserted here as a byte count, never a time;
# `benchmarks/test_bench_eval_without_no_grad.py` times the two variants side by side on a larger
# model.

# %% [markdown]
# ## How the harness checks it
#
# Memory that grows during validation, and a tensor in the loop with a `grad_fn`, can come from
# elsewhere: here validation is done right, under `no_grad`, but the epoch's running loss was
# summed from the *training* losses, graphs and all (the case `loss-append-keeps-graph`). The
# validation forward saved nothing.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S2


def symptom(run):
    """The forward kept at least the hidden activation (BATCH x HIDDEN float32) for backward."""
    return run.error is None and run.value["has_grad_fn"] and run.value["saved_bytes"] >= BATCH * HIDDEN * 4


def near_miss(device):
    model, x = make_model_and_batch(device)
    model.train()
    running_loss = 0.0
    for _ in range(2):  # the training steps before validation
        loss = model(x).square().mean()
        loss.backward()
        running_loss = running_loss + loss  # should be loss.item()
    model.eval()
    out, held = saved_bytes(validate_no_grad, model, x)
    return {"saved_bytes": held, "has_grad_fn": running_loss.grad_fn is not None, "out": out}


def check(run, device):
    """Nothing was saved for backward, the output has no grad_fn, and its values are the
    network written out by hand (two affine maps and a clamp) on the same seeded weights."""
    assert run.value["saved_bytes"] == 0, run.value["saved_bytes"]
    assert not run.value["has_grad_fn"]
    model, x = make_model_and_batch(device)
    first, second = model[0], model[2]
    with torch.no_grad():
        hidden = (x @ first.weight.T + first.bias).clamp_min(0)
        expected = hidden @ second.weight.T + second.bias
    torch.testing.assert_close(run.value["out"], expected)


CASE = Case(
    id="eval-without-no-grad",
    title="Validation without torch.no_grad()",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="Validation runs out of memory or is slow: every output still builds a graph.",
    # Autograd records every op on tensors that require grad unless told not to; model.eval()
    # never changed that. Observed on 2.13.0; no release changed it.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S2.at("section '在验证和测试阶段取消掉梯度(no_grad)' (no_grad for validation and test)"),),
    tags=("autograd", "no_grad", "inference_mode", "memory", "evaluation"),
    references=(
        "https://pytorch.org/docs/1.12/generated/torch.autograd.no_grad.html",
        "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",  # volatile=True gives way to no_grad
        "https://github.com/pytorch/pytorch/releases/tag/v0.4.0",
    ),
)
