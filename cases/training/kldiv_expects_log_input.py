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
from torch.distributions import Categorical, kl_divergence

from torch_pitfalls import observe

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
    return nn.KLDivLoss()(q, p)  # q given as probabilities, reduction='mean'


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
# ask for `reduction='batchmean'`. The check compares the result with `torch.distributions`'
# closed-form KL between two categorical distributions, a different code path.


# %%
def fixed(device):
    p = torch.tensor(TEACHER, device=device)
    q = torch.tensor(STUDENT, device=device)
    return nn.KLDivLoss(reduction="batchmean")(q.log(), p)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post's section on `MSELoss` and `KLDivLoss` introduces them as two losses in
# common use and then warns about their target: a target with `requires_grad=True` made the
# loss raise, where TensorFlow's `softmax_cross_entropy_with_logits_v2` accepts a trainable
# target. That pitfall, of old releases, is the case `loss-target-requires-grad`. The post
# does not discuss the input's log scale or the reduction: this case is the catalogue's row
# for `KLDivLoss` itself, and what it says comes from the documentation and issues below.
#
# The log-input convention and the reduction are documented on the `KLDivLoss` page, whose warning
# says `'mean'` does not return the true KL divergence. `'batchmean'` and the runtime warning
# arrived with pytorch/pytorch#14457 (November 2018, labelled for 1.0; it fixes #6622, and #2259
# had asked the same in 2017); the warning still promises that `'mean'` will behave like
# `'batchmean'` in a future major release, and on 2.13.0 it has not.

# %% [markdown]
# ## How the harness checks it
#
# A wrong distillation loss from `KLDivLoss` is not always this pitfall. Here log-probabilities
# go in, with `'batchmean'`, but the roles are swapped: the teacher's log-probabilities sit in
# the input slot and the student's probabilities in the target, so the loss is KL(q||p), 0.28,
# instead of KL(p||q), 0.26. A positive divergence, of the wrong direction, and no warning.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S2


def symptom(run):
    """Both halves: a negative 'divergence' (the true KL(p||q) here is +0.26), and the warning
    that reduction='mean' is not 'batchmean'."""
    return run.error is None and run.value.item() < 0 and run.warned(UserWarning, r"\bmean\b.*\bbatchmean\b")


def near_miss(device):
    p = torch.tensor(TEACHER, device=device)
    q = torch.tensor(STUDENT, device=device)
    return nn.KLDivLoss(reduction="batchmean")(p.log(), q)


def check(run, device):
    """The loss is KL(p||q) averaged over the batch, as torch.distributions computes it for two
    categorical distributions from the same probabilities."""
    p = torch.tensor(TEACHER, device=device)
    q = torch.tensor(STUDENT, device=device)
    expected = kl_divergence(Categorical(probs=p), Categorical(probs=q)).mean()
    torch.testing.assert_close(run.value, expected)


CASE = Case(
    id="kldiv-expects-log-input",
    title="KLDivLoss wants log-probabilities",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="The KL-divergence loss comes out negative and keeps falling below zero.",
    # The wrong value (input read as log-probabilities) is as old as the loss. The warning on
    # the default reduction='mean' came with pytorch/pytorch#14457 (labelled for 1.0, Nov
    # 2018); the symptom checks both, so the range starts there. Observed from 1.13.1 by the
    # matrix, still on 2.13.0.
    affects=(
        Affects(
            ">=1.0",
            since="pytorch/pytorch#14457 (November 2018, labelled for 1.0) "
            "added 'batchmean' and the warning on reduction='mean'",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S2.at(
            "section 'pytorch中的MSELoss和KLDivLoss' (MSELoss and KLDivLoss): it names "
            "the loss; its pitfall there is the case loss-target-requires-grad"
        ),
    ),
    tags=("loss", "kl_div", "log_softmax", "reduction"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.KLDivLoss.html",
        "https://github.com/pytorch/pytorch/pull/14457",  # adds 'batchmean' and the warning
        "https://github.com/pytorch/pytorch/issues/2259",  # 'mean' is not the KL divergence
        "https://github.com/pytorch/pytorch/issues/6622",  # fixed by #14457
    ),
)
