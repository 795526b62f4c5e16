# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A tensor made under `inference_mode` reused in training
#
# To save time, you run a frozen encoder once over the data under `torch.inference_mode()` and
# cache its embeddings, then train a small head on the cached tensors. Or a rollout or generation
# step runs under `inference_mode` and the training step reuses its outputs. The first training
# step stops with `RuntimeError: Inference tensors cannot be saved for backward`. The same code
# with `torch.no_grad()` runs. `inference_mode` is the faster mode, but the tensors it creates
# come with a restriction that `no_grad`'s tensors do not have.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A frozen encoder turns four inputs into 3-dimensional embeddings once, under
# `inference_mode`. A trainable linear head is then fitted on the cached embeddings with a
# squared loss.

# %%
X = [[1.0, 0.0, -1.0, 2.0], [0.5, 1.5, 0.0, -1.0], [2.0, -0.5, 1.0, 0.0], [-1.0, 1.0, 0.5, 0.5]]
TARGET = [1.0, -1.0, 0.5, 0.0]


def models(device):
    with seeded(0):
        encoder, head = nn.Linear(4, 3), nn.Linear(3, 1)
    return encoder.to(device).requires_grad_(False), head.to(device)


def head_gradient(head, features, device):
    """One training step's backward for the head on cached features; its weight's gradient."""
    target = torch.tensor(TARGET, device=device).unsqueeze(1)
    loss = ((head(features) - target) ** 2).mean()
    loss.backward()
    return head.weight.grad


def broken(device):
    encoder, head = models(device)
    x = torch.tensor(X, device=device)
    with torch.inference_mode():  # the fast way to precompute the cache
        cached = encoder(x)
    return head_gradient(head, cached, device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `inference_mode` is faster than `no_grad` because it also skips bookkeeping that autograd
# needs later. Tensors created inside it are *inference tensors*: they have no version counter
# (the counter autograd uses to detect in-place changes to saved tensors) and they do not track
# views. A tensor that autograd saves for the backward pass must have that counter. The head's
# linear layer needs its input to compute the gradient of its weight, so it tries to save
# `cached` as soon as the forward runs with a trainable weight, and the save is refused. The
# error is raised in the training step's forward pass, far from the `inference_mode` block that
# caused it. Tensors created under `no_grad` are ordinary tensors that simply have no history,
# so they can be saved and used in training later.
#
# ## The fix
# Make the cache with `torch.no_grad()` when its tensors will meet autograd again. If the
# inference tensors come from code you do not control, turn them into normal tensors with
# `.clone()` *outside* `inference_mode` (the error message suggests the same) before training
# on them.


# %%
def fixed(device):
    encoder, head = models(device)
    x = torch.tensor(X, device=device)
    with torch.no_grad():  # ordinary tensors without history
        cached = encoder(x)
    return head_gradient(head, cached, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The autograd notes ("Locally disabling gradient computation", section "Inference Mode") and
# `torch.inference_mode`'s documentation state the trade-off: tensors created in inference mode
# cannot be used in computations that autograd records after the mode is left. They suggest
# `no_grad` where that restriction gets in the way. The C++ note on `InferenceMode` lists what
# inference tensors lack (a version counter) and the workaround (a clone made outside the mode).
# The error shows up in training code that mixes generation and learning:
# huggingface/trl#2983 (the GRPO trainer with `num_iterations` above 1),
# hiyouga/LlamaFactory#220 and #184 (PPO), unslothai/unsloth#2434 (GRPO), and
# facebookresearch/dinov2#472 (training the model set up by the official notebook).
# `inference_mode` arrived in torch 1.9. pytorch/pytorch#161164 (2025) made the message say not
# to use tensors created in inference mode in computations tracked by autograd.

# %% [markdown]
# ## How the harness checks it
# Not every `RuntimeError` in a training step after a gradient-free block is this one. If the
# whole forward pass runs under `no_grad` (the head included), `loss.backward()` fails with
# "element 0 of tensors does not require grad and does not have a grad_fn": nothing was
# recorded. That is another mistake with another message, and the symptom matches only the
# inference-tensor message. The fix's gradient is checked against the formula for a linear
# layer under a mean squared loss, written out by hand.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The training step refused to save an inference tensor for backward."""
    return run.raised(RuntimeError, r"Inference tensors cannot be saved for backward")


def near_miss(device):
    encoder, head = models(device)
    x = torch.tensor(X, device=device)
    with torch.no_grad():  # the head's forward too: nothing is recorded
        cached = encoder(x)
        target = torch.tensor(TARGET, device=device).unsqueeze(1)
        loss = ((head(cached) - target) ** 2).mean()
    loss.backward()
    return head.weight.grad


def check(run, device):
    """dL/dW = (2/N) * sum_i (h_i - t_i) * f_i, with f = the encoder's features and h the
    head's outputs, computed in float64 from the same seeded weights."""
    encoder, head = models(device)
    x = torch.tensor(X, device=device, dtype=torch.float64)
    f = x @ encoder.weight.detach().double().T + encoder.bias.detach().double()
    h = f @ head.weight.detach().double().T + head.bias.detach().double()
    t = torch.tensor(TARGET, device=device, dtype=torch.float64).unsqueeze(1)
    expected = (2.0 / len(X)) * ((h - t) * f).sum(0, keepdim=True)
    torch.testing.assert_close(run.value, expected.float())


CASE = Case(
    id="inference-mode-tensor-in-autograd",
    title="A tensor made under inference_mode reused in training",
    kind="error",
    symptom_category="error",
    symptom_line="Training on a tensor cached under inference_mode raises: Inference tensors cannot be saved for backward.",
    affects=(
        Affects(
            ">=1.9",
            since="the 1.9.0 release notes, which introduced torch.inference_mode",
            reason="inference tensors have no version counter, so autograd cannot save them",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: Autograd mechanics, Locally disabling gradient computation (Inference Mode)",
            url="https://docs.pytorch.org/docs/stable/notes/autograd.html#inference-mode",
        ),
        Source(
            title="PyTorch docs: torch.autograd.grad_mode.inference_mode",
            url="https://docs.pytorch.org/docs/stable/generated/torch.autograd.grad_mode.inference_mode.html",
        ),
        Source(
            title="huggingface/trl#2983: GRPO Trainer, num_iterations > 1: Inference tensors cannot be saved for backward",
            url="https://github.com/huggingface/trl/issues/2983",
        ),
        Source(
            title="facebookresearch/dinov2#472: RuntimeError: Inference tensors cannot be saved for backward",
            url="https://github.com/facebookresearch/dinov2/issues/472",
        ),
    ),
    tags=("autograd", "inference_mode", "no_grad", "caching"),
    references=(
        "https://docs.pytorch.org/cppdocs/notes/inference_mode.html",
        "https://github.com/hiyouga/LlamaFactory/issues/220",
        "https://github.com/unslothai/unsloth/issues/2434",
        "https://github.com/pytorch/pytorch/pull/161164",  # a clearer message (2025)
    ),
)
