# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `KLDivLoss` wants log-probabilities
#
# A distillation loss compares the student's softmax with the teacher's through
# `nn.KLDivLoss()(student_probs, teacher_probs)`. The loss comes out **negative**, which a
# KL divergence never is, training pushes it further below zero, and the console shows a
# `UserWarning` about `'mean'` and `'batchmean'` that is easy to filter away.

# %%
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Categorical, kl_divergence

from harness import Case, observe
from harness.sources import S2

CASE = Case(
    id="kldiv-expects-log-input",
    title="KLDivLoss wants log-probabilities",
    kind="silent",
    # The wrong value (input read as log-probabilities) is as old as the loss. The warning on
    # the default reduction='mean' came with pytorch/pytorch#14457 (labelled for 1.0, Nov
    # 2018); the symptom checks both, so the range starts there. Observed on 2.13.0.
    affects=">=1.0",
    devices=("cpu", "cuda"),
    sources=(S2.at("section 'pytorch中的MSELoss和KLDivLoss' (MSELoss and KLDivLoss)"),),
    tags=("loss", "kl_div", "log_softmax", "reduction"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.KLDivLoss.html",
        "https://github.com/pytorch/pytorch/pull/14457",   # adds 'batchmean' and the warning
        "https://github.com/pytorch/pytorch/issues/2259",  # 'mean' is not the KL divergence
        "https://pytorch.org/docs/0.3.1/_modules/torch/nn/modules/loss.html",  # _assert_no_grad
        "https://github.com/pytorch/pytorch/issues/7186",  # modules assert, functionals don't
        "https://github.com/pytorch/pytorch/pull/8460",    # losses stop refusing targets that require grad
        "https://github.com/pytorch/pytorch/pull/10336",   # kl_div moved to ATen, target backward kept
        "https://github.com/pytorch/pytorch/issues/5081",  # backprop through kl_div's target
    ),
)

# %% [markdown]
# ## The broken code
# Two samples over three classes: the teacher's distribution `p` (the target) and the
# student's `q`, both plain probabilities, passed in the natural order with the default
# reduction.

# %%
TEACHER = [[0.2, 0.3, 0.5], [0.6, 0.3, 0.1]]
STUDENT = [[0.4, 0.4, 0.2], [0.3, 0.3, 0.4]]


def broken(device):
    p = torch.tensor(TEACHER, device=device)
    q = torch.tensor(STUDENT, device=device)
    return nn.KLDivLoss()(q, p)          # q given as probabilities, reduction='mean'


def symptom(run):
    """A negative 'divergence' (the true KL(p||q) here is +0.26), and the 'mean' warning."""
    return (
        run.error is None
        and run.value.item() < 0
        and run.warned(UserWarning, "batchmean")
    )


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `KLDivLoss(input, target)` computes `target * (log(target) - input)` element by element: it
# takes `input` to be **log**-probabilities already (computing a log of a softmax directly,
# with `log_softmax`, is more accurate than taking the log afterwards). Fed probabilities,
# `input` is in [0, 1] where a log-probability is at most 0, and every term becomes
# `p log p - p q`, a sum of two non-positive numbers: the loss is negative whatever the
# distributions, and minimising it optimises something else (a function linear in `q`, not
# a divergence). The second problem is the
# default `reduction='mean'`: it divides the sum by the number of *elements* (batch times
# classes), not by the batch size, so even with log-probabilities it is not the KL divergence
# but that divided by the number of classes. That is what the warning says; `'batchmean'`
# gives the divergence averaged over the batch.
#
# ## The fix
# Pass the student's log-probabilities (`log_softmax` of its logits, or `q.log()` here) and
# ask for `reduction='batchmean'`. The result is checked against `torch.distributions`'
# closed-form KL between two categorical distributions, a different code path. The target
# may require grad (a learned teacher): its gradient `(log(p/q) + 1) / N` is checked too.

# %%
def fixed(device):
    p = torch.tensor(TEACHER, device=device, requires_grad=True)
    q = torch.tensor(STUDENT, device=device)
    loss = nn.KLDivLoss(reduction="batchmean")(q.log(), p)
    loss.backward()
    with torch.no_grad():
        expected = kl_divergence(Categorical(probs=p), Categorical(probs=q)).mean()
        expected_grad = ((p / q).log() + 1) / len(TEACHER)
    torch.testing.assert_close(loss.detach(), expected)
    torch.testing.assert_close(p.grad, expected_grad)
    return loss.detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's section on `MSELoss` and `KLDivLoss` is about the target: it reports that
# these losses raise an error when the target has `requires_grad=True`, unlike TensorFlow's
# `softmax_cross_entropy_with_logits_v2`. That was true of old releases: in 0.3 the `nn` loss
# modules asserted that the target did not require grad (`_assert_no_grad`), while the
# functional forms did not (#7186). pytorch/pytorch#8460 (June 2018, after 0.4.0) removed the
# check from the modules once the losses could differentiate their targets; `kl_div`'s target
# gradient, asked for in #5081, already existed in the implementation that #10336 replaced in
# August 2018. The first release without the check is not pinned by this project (0.4.1 was
# the next one); nothing below torch 1.13 can be installed by the version matrix, so the
# `fixed` variant guards today's behaviour by differentiating through the target.
#
# The log-input convention and the reduction are documented on the `KLDivLoss` page, whose
# warning says `'mean'` does not return the true KL divergence. `'batchmean'` and the runtime
# warning arrived with pytorch/pytorch#14457 (November 2018, labelled for 1.0; it fixes #6622,
# and #2259 had asked the same in 2017); the warning still promises that `'mean'` will behave like
# `'batchmean'` in a future major release, and on 2.13.0 it has not. The CUDA side was not
# observed by this project's runs.
