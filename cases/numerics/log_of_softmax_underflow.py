# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `log(softmax(x))` underflows to `-inf`
#
# A hand-written label-smoothed cross-entropy trains for hours, then the logged loss turns into
# `inf` and the next step fills the model with `nan`. The logits were finite, only large: the
# model had become very confident. The loss was computed as `torch.log(torch.softmax(logits))`,
# and for a class the model considers hopeless the softmax probability is smaller than the
# smallest positive `float32`: it rounds to exactly 0, and `log(0)` is `-inf`.

# %%
import math

import torch
import torch.nn.functional as F

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two samples of confident logits over three classes, and a label-smoothed target (0.9 on the
# label, 0.05 on each other class). The log-probabilities are taken as the log of the softmax.

# %%
LOGITS = [[0.0, 120.0, -5.0], [30.0, -80.0, 5.0]]
TARGETS = [[0.05, 0.9, 0.05], [0.9, 0.05, 0.05]]  # labels 1 and 0, smoothed


def smoothed_cross_entropy(device, log_probs_of):
    logits = torch.tensor(LOGITS, device=device, requires_grad=True)
    targets = torch.tensor(TARGETS, device=device)
    loss = -(targets * log_probs_of(logits)).sum(dim=1).mean()
    loss.backward()
    return {"loss": loss.item(), "grad": logits.grad, "logits_finite": bool(torch.isfinite(logits).all())}


def broken(device):
    return smoothed_cross_entropy(device, lambda z: torch.log(torch.softmax(z, dim=1)))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `softmax` subtracts the row's maximum before exponentiating, so it never overflows, but the
# small probabilities still underflow. In the first row the probability of class 0 is `exp(0 -
# 120) ≈ 7.7e-53`, far below `float32`'s smallest positive value (about `1.4e-45`), so it is
# stored as 0. `log(0) = -inf`, and the smoothing weight 0.05 times `-inf` makes the loss `inf`.
# The backward pass is worse: `log`'s derivative at 0 is `inf`, and the softmax backward
# multiplies it with terms that are 0, so the gradient is `nan` in every entry of both rows. The
# information was never lost, only the order of operations threw it away: `log_softmax(x)_i =
# x_i - logsumexp(x)` is `-120` here, an ordinary number, and its gradient is `softmax(x) -
# target`, bounded by 1.
#
# ## The fix
# Use `F.log_softmax` (or `nn.LogSoftmax`) wherever a log-probability is needed, and hand it to
# `F.nll_loss` or a hand-written loss; better still, use `F.cross_entropy`, which takes logits
# and has had `label_smoothing=` since 1.10. The check recomputes the loss as `Σ target ·
# (logsumexp(x) - x)` and the gradient as `(softmax(x) - target) / batch`, in double precision.


# %%
def fixed(device):
    return smoothed_cross_entropy(device, lambda z: F.log_softmax(z, dim=1))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `torch.nn.functional.log_softmax` documentation warns that taking the softmax and then its
# log, though the same function on paper, is slower and numerically unstable, and the
# `nn.Softmax` page recommends `LogSoftmax` for its speed and its numerics. pytorch/pytorch#1620
# reports the difference from the user's side: a pointer-network loss written as `torch.log` of
# a softmax gets `nan` gradients where `nn.LogSoftmax` computes them correctly.
# allenai/allennlp#2797 is the same failure in a model: a softmax over logits around -140 to
# -250 gives an exact 0, and the `-torch.log` of it ends training with a `nan` loss. Underflow
# is a property of `float32`, the same in every release.

# %% [markdown]
# ## How the harness checks it
# An infinite or `nan` loss also comes from logits that are themselves infinite (an overflow
# upstream, a division by zero in the model): then even `log_softmax` returns `nan`. That bug is
# before the loss; the symptom asks for finite logits, an `inf` loss and `nan` gradients, and
# does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The logits are finite, yet the loss is +inf and the gradient nan."""
    if run.error is not None:
        return False
    v = run.value
    return v["logits_finite"] and v["loss"] == math.inf and bool(torch.isnan(v["grad"]).any())


def near_miss(device):
    """log_softmax, but a logit overflowed to inf upstream."""
    logits = torch.tensor([[0.0, float("inf"), -5.0]], device=device, requires_grad=True)
    targets = torch.tensor(TARGETS[:1], device=device)
    loss = -(targets * F.log_softmax(logits, dim=1)).sum(dim=1).mean()
    loss.backward()
    return {"loss": loss.item(), "grad": logits.grad, "logits_finite": bool(torch.isfinite(logits).all())}


def check(run, device):
    """Loss = mean over rows of Σ target · (logsumexp(x) - x); gradient = (softmax(x) - target) /
    rows; both worked out by hand in double precision."""
    assert run.error is None, f"raised {run.error!r}"
    rows = len(LOGITS)
    loss, grad = 0.0, []
    for x, t in zip(LOGITS, TARGETS):
        top = max(x)
        lse = top + math.log(sum(math.exp(v - top) for v in x))
        loss += sum(ti * (lse - xi) for xi, ti in zip(x, t)) / rows
        grad.append([(math.exp(xi - lse) - ti) / rows for xi, ti in zip(x, t)])
    assert abs(run.value["loss"] - loss) < 1e-4, (run.value["loss"], loss)
    torch.testing.assert_close(
        run.value["grad"].double().cpu(), torch.tensor(grad, dtype=torch.float64), rtol=1e-5, atol=1e-6
    )


CASE = Case(
    id="log-of-softmax-underflow",
    title="log(softmax(x)) underflows to -inf",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="With large, finite logits, log(softmax(x)) gives -inf: the loss is inf and the gradient nan.",
    # float32 underflow below ~1.4e-45 and log(0) = -inf are IEEE arithmetic; log_softmax has
    # been the stable spelling since the first releases. No release changes it.
    affects=(Affects("*", reason="float32 underflow and log(0) = -inf; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.nn.functional.log_softmax (log(softmax(x)) done separately is numerically unstable)",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.log_softmax.html",
        ),
        Source(
            title="pytorch/pytorch#1620: nn.LogSoftmax(x) and torch.log(nn.Softmax(x)) differ; the latter gives nan gradients",
            url="https://github.com/pytorch/pytorch/issues/1620",
        ),
        Source(
            title="allenai/allennlp#2797: Softmax giving absolute 0 resulting in 'nan' loss value",
            url="https://github.com/allenai/allennlp/issues/2797",
        ),
    ),
    tags=("numerics", "softmax", "log_softmax", "underflow", "nan"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Softmax.html",
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.functional.cross_entropy.html",
    ),
)
