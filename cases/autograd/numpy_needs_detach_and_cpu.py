# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `.numpy()` on a model's output in the training loop
#
# Inside the training loop you compute a metric with NumPy or scikit-learn, or plot the
# predictions with Matplotlib: `preds = logits.numpy().argmax(1)`. The line stops the run. On a
# CPU it raises `RuntimeError: Can't call numpy() on Tensor that requires grad`. On a GPU it
# raises `TypeError: can't convert cuda:0 device type tensor to numpy`. The same line works in
# the evaluation script, where the model runs under `torch.no_grad()` on the CPU. A tensor that
# comes out of a model during training is still part of the autograd graph, and possibly still in
# GPU memory, and `.numpy()` refuses both.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# One training step of a small classifier on `device`, followed by the accuracy of the batch
# computed with NumPy, as a metrics library would.

# %%
X = [[1.0, -0.5, 0.3], [-1.2, 0.8, 0.1], [0.4, 0.4, -1.0], [0.0, -1.5, 0.7]]
LABELS = [0, 1, 1, 0]


def training_step(device):
    with seeded(0):
        model = nn.Linear(3, 2).to(device)
    x, y = torch.tensor(X, device=device), torch.tensor(LABELS, device=device)
    logits = model(x)
    F.cross_entropy(logits, y).backward()
    return logits


def batch_accuracy(predictions):
    """What a NumPy-based metric does with the predictions it is given."""
    return {"predicted": predictions.tolist(), "accuracy": float((predictions == LABELS).mean())}


def broken(device):
    logits = training_step(device)
    return batch_accuracy(logits.numpy().argmax(1))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A NumPy array shares memory with the tensor it came from and knows nothing about autograd.
# If `.numpy()` worked on a tensor that requires grad, any change made through the array would be
# invisible to the graph, and nothing done with the array could ever send a gradient back.
# PyTorch makes you say that you are leaving the graph: `.detach()` returns a tensor that shares
# the data but is cut from the graph. Under `torch.no_grad()` a model's outputs do not require
# grad in the first place, which is why evaluation code does not hit the error. NumPy can also
# only see host memory. A CUDA tensor has to be copied to the CPU first with `.cpu()`, and
# `.numpy()` will not do that copy for you. On a GPU the device check comes first, so that is the
# error you see there. `torch.Tensor.numpy` documents all of these conditions.
#
# ## The fix
# Write `logits.detach().cpu().numpy()`: cut the graph, copy to host memory (a no-op on the
# CPU), then convert. Put `detach()` first so that the copy to the CPU is not recorded in the
# graph. Since torch 1.13 (pytorch/pytorch#78564), `logits.numpy(force=True)` does the same in
# one call. For scalars, `loss.item()` is enough.


# %%
def fixed(device):
    logits = training_step(device)
    return batch_accuracy(logits.detach().cpu().numpy().argmax(1))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The documentation of `torch.Tensor.numpy` lists the conditions: without `force=True` the
# tensor must be on the CPU, must not require grad, and must not have its conjugate bit set.
# `force=True` stands for `t.detach().cpu().resolve_conj().resolve_neg().numpy()`. On Stack
# Overflow, "Why do we call .detach() before calling .numpy() on a Pytorch Tensor?" collects the
# maintainers' forum answers on why the conversion is refused: moving to NumPy breaks the graph,
# so PyTorch wants the break made explicit. Older releases worded the message "Can't call
# numpy() on Variable that requires grad. Use var.detach().numpy() instead", and many questions
# still quote it that way. Both refusals, for the device and for the gradient, predate every
# release in the matrix, and none has dropped them.

# %% [markdown]
# ## How the harness checks it
# `.numpy()` refuses other tensors with a message that looks the same. A complex tensor with its
# conjugate bit set (the lazy result of `.conj()`, common in signal-processing code) raises
# "Can't call numpy() on Tensor that has conjugate bit set", a `RuntimeError` of the same shape
# that `resolve_conj()` fixes, not `detach()`. The symptom accepts only the requires-grad
# message on the CPU and the device message on a GPU. The fix's predictions are checked against
# `argmax` taken in torch, without NumPy.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """`.numpy()` refused the training output: on the CPU because it requires grad, on a GPU
    because it lives in device memory (that check comes first there)."""
    if run.raised(RuntimeError, r"numpy\(\) on (Tensor|Variable) that requires grad"):
        return "requires grad"
    if run.raised(TypeError, r"can't convert cuda.* to numpy"):
        return "device memory"
    return False


def near_miss(device):
    spectrum = torch.tensor([1 + 2j, 3 - 1j], device=device).cpu()
    return spectrum.conj().numpy()  # conjugate bit set: refused


def check(run, device):
    """The predicted classes are the row-wise argmax of the logits taken in torch, and the
    accuracy is the fraction of them equal to the labels, counted in Python."""
    with seeded(0):
        model = nn.Linear(3, 2).to(device)
    with torch.no_grad():
        predicted = model(torch.tensor(X, device=device)).argmax(1).tolist()
    accuracy = sum(p == t for p, t in zip(predicted, LABELS)) / len(LABELS)
    assert run.value == {"predicted": predicted, "accuracy": accuracy}, (run.value, predicted, accuracy)


CASE = Case(
    id="numpy-needs-detach-and-cpu",
    title=".numpy() on a model's output in the training loop",
    kind="error",
    symptom_category="error",
    symptom_line="logits.numpy() raises: Can't call numpy() on Tensor that requires grad (on a GPU: can't convert cuda:0).",
    affects=(
        Affects(device="cpu", form="requires grad"),
        Affects(device="cuda", form="device memory"),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: torch.Tensor.numpy",
            url="https://docs.pytorch.org/docs/stable/generated/torch.Tensor.numpy.html",
        ),
        Source(
            title="Stack Overflow: Why do we call .detach() before calling .numpy() on a Pytorch Tensor?",
            url="https://stackoverflow.com/questions/63582590/why-do-we-call-detach-before-calling-numpy-on-a-pytorch-tensor",
        ),
    ),
    tags=("autograd", "numpy", "detach", "cpu", "metrics"),
    references=(
        "https://github.com/pytorch/pytorch/issues/20778",  # the request for a one-step conversion
        "https://github.com/pytorch/pytorch/pull/78564",  # numpy(force=True), in 1.13
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.cpu.html",
    ),
)
