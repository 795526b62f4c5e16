# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A distance written with `sqrt` has a NaN gradient at zero
#
# A metric-learning loss averages the Euclidean distances between all pairs of embeddings in a
# batch, written out as `((a - b) ** 2).sum(-1).sqrt()`. The loss is a perfectly ordinary
# number. Its gradient is `nan` in every entry, and after one optimizer step every weight of the
# model is `nan` too. The culprit is the diagonal: each embedding's distance to itself is 0, and
# the derivative of `sqrt` at 0 is infinite.

# %%
import math

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Four embeddings of size 3 (a leaf tensor standing in for a model's output), the matrix of
# pairwise distances written by hand, and its mean as the loss.

# %%
EMBEDDINGS = [[0.5, -1.0, 2.0], [1.5, 0.0, -0.5], [-1.0, 1.0, 0.0], [0.0, 2.0, 1.0]]


def pairwise_mean_distance(device, distance):
    z = torch.tensor(EMBEDDINGS, device=device, requires_grad=True)
    loss = distance(z).mean()
    loss.backward()
    return {"loss": loss.item(), "grad": z.grad}


def distances(z):
    diff = z[:, None, :] - z[None, :, :]
    return (diff**2).sum(dim=-1).sqrt()  # the diagonal is sqrt(0)


def broken(device):
    return pairwise_mean_distance(device, distances)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `d/du sqrt(u) = 1 / (2 sqrt(u))`, which is `inf` at `u = 0`. On the diagonal, `u` is the sum
# of squared differences of an embedding with itself, exactly 0. Going backward, `sqrt`'s
# backward multiplies the incoming gradient by `inf`, and the next step back, the derivative of
# `diff ** 2`, multiplies by `2 * diff = 0`: `inf * 0` is `nan` in IEEE arithmetic. Each row of
# the gradient is a sum that includes its diagonal term, so every entry is `nan`. The forward
# pass never sees a problem, because `sqrt(0) = 0`. The same happens with a hand-written norm of
# any vector that can be exactly zero (a padded row, two identical samples, a collapsed
# embedding), and with `x ** 0.5`.
#
# ## The fix
# Keep the argument of `sqrt` away from 0: `sqrt(u + eps)` with a small `eps` (here `1e-12`,
# which moves a distance of 1 by 5e-13). The diagonal's gradient is then `0 / sqrt(eps) = 0`, a
# true zero. `torch.cdist`, `torch.linalg.vector_norm` and `Tensor.norm` already do the right
# thing: their backward defines the gradient at a zero norm as 0 (a subgradient), and
# `F.pairwise_distance` adds an `eps` to the difference. Masking the diagonal *after* the `sqrt`
# does not help (see `nan-grad-through-mask`). The check compares the gradient with the closed
# form, `dL/dz_i = (1/N²) Σ_{j≠i} 2 (z_i - z_j) / ‖z_i - z_j‖`, written out in double precision.


# %%
EPS = 1e-12


def safe_distances(z):
    diff = z[:, None, :] - z[None, :, :]
    return ((diff**2).sum(dim=-1) + EPS).sqrt()


def fixed(device):
    return pairwise_mean_distance(device, safe_distances)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#2421 ("Gradient of zero norm is nan") reported it for `x.norm()` in 2017; the
# answer there is the mechanism above (the square root's infinite slope at 0, multiplied by 0),
# and PR #2775 made the built-in norm return the subgradient 0 at 0, noting that a hand-written
# `.pow(2).sum().sqrt()` still gives `nan`. torchtest2's bug gallery shows the same pairwise
# Euclidean distance with a clean forward pass and `nan` gradients, caught by its
# `gradient_magnitude` check, and names `sqrt` of zero as the usual cause. The derivative of
# `sqrt` at 0 has been infinite in every release.

# %% [markdown]
# ## How the harness checks it
# A `nan` gradient also follows from a `nan` in the data: a corrupted sample makes the loss
# itself `nan`, and every gradient with it. That is bad input, not `sqrt` at zero; the symptom
# asks for a finite loss with a `nan` gradient, and does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The loss is finite and every entry of the gradient is nan."""
    if run.error is not None:
        return False
    return math.isfinite(run.value["loss"]) and bool(torch.isnan(run.value["grad"]).all())


def near_miss(device):
    """The broken distance, but one embedding is already nan: the loss is nan too."""
    z = torch.tensor(EMBEDDINGS, device=device)
    z[2, 1] = float("nan")
    z.requires_grad_(True)
    loss = distances(z).mean()
    loss.backward()
    return {"loss": loss.item(), "grad": z.grad}


def check(run, device):
    """The loss is the mean pairwise distance and the gradient its closed form, (1/N²) Σ_{j≠i}
    2 (z_i - z_j) / ‖z_i - z_j‖, both worked out by hand in double precision."""
    assert run.error is None, f"raised {run.error!r}"
    n = len(EMBEDDINGS)

    def dist(a, b):
        return math.sqrt(sum((p - q) ** 2 for p, q in zip(a, b)))

    loss = sum(dist(a, b) for a in EMBEDDINGS for b in EMBEDDINGS) / n**2
    grad = [
        [
            sum(2 * (zi[k] - zj[k]) / dist(zi, zj) for j, zj in enumerate(EMBEDDINGS) if j != i) / n**2
            for k in range(len(zi))
        ]
        for i, zi in enumerate(EMBEDDINGS)
    ]
    assert abs(run.value["loss"] - loss) < 1e-5, (run.value["loss"], loss)
    torch.testing.assert_close(
        run.value["grad"].double().cpu(), torch.tensor(grad, dtype=torch.float64), rtol=1e-5, atol=1e-6
    )


CASE = Case(
    id="sqrt-at-zero-nan-grad",
    title="A distance written with sqrt has a NaN gradient at zero",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="A pairwise-distance loss is finite, but its gradient is nan: sqrt(0) on the diagonal.",
    # sqrt's derivative at 0 is infinite and inf * 0 is nan in IEEE arithmetic: the backward
    # formula of sqrt has not changed in any release.
    affects=(Affects("*", reason="sqrt's derivative is infinite at 0 and inf * 0 is nan; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#2421: Gradient of zero norm is nan",
            url="https://github.com/pytorch/pytorch/issues/2421",
        ),
        Source(
            title="torchtest2: NaN gradients behind a clean forward pass (the gradient_magnitude check)",
            url="https://pypi.org/project/torchtest2/",
        ),
    ),
    tags=("autograd", "nan", "sqrt", "distance"),
    references=(
        "https://github.com/pytorch/pytorch/pull/2775",  # the built-in norm returns 0 at 0
        "https://docs.pytorch.org/docs/stable/generated/torch.cdist.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.pairwise_distance.html",
    ),
)
