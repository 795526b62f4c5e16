# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Gradient accumulation without dividing the loss
#
# The batch you want does not fit in memory, so you run it as K micro-batches, call
# `loss.backward()` after each and `optimizer.step()` once at the end: "the same as one big
# batch". Training is noticeably less stable than the big-batch run you were imitating, and
# a learning rate that worked there now overshoots. Nothing raises: every optimizer step is
# simply K times longer than the step the big batch would have taken.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A one-weight regression `y ≈ w·x` on eight samples, `w` starting at 0. The intended update
# is one SGD step on the mean-squared error of all eight; we run it as K = 4 micro-batches
# of two, each with its own mean loss, and step once.

# %%
X = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]
Y = [2.0 * x for x in X]  # the true slope is 2
K = 4  # micro-batches per optimizer step
LR = 0.01


def full_batch_step():
    """The step one SGD update on all eight samples takes, by hand: at w = 0 the gradient of
    mean((w·x - y)²) is -2·mean(x·y), so the new w is LR · 2 · mean(x·y)."""
    return LR * 2 * sum(x * y for x, y in zip(X, Y)) / len(X)


def micro_batches(device):
    x = torch.tensor(X, device=device)
    y = torch.tensor(Y, device=device)
    return zip(x.chunk(K), y.chunk(K))


def broken(device):
    w = torch.zeros(1, device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    opt.zero_grad()
    for x, y in micro_batches(device):
        loss = ((w * x - y) ** 2).mean()  # the mean over 2 samples, not over 8
        loss.backward()  # adds this micro-batch's gradient to w.grad
    opt.step()
    return w.detach()


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"), "vs the full-batch step", full_batch_step())

# %% [markdown]
# ## Why
# `backward()` does not overwrite `.grad`, it adds to it. Each micro-batch loss is already a
# *mean* over its own samples, so its gradient has the size of a whole batch's gradient; adding
# K of them gives K times the mean gradient of the big batch, and `optimizer.step()` has no
# way of knowing how many backward calls went into `.grad`. Here the big batch moves `w` from
# 0 to 1.02 (towards the true slope 2); the accumulated version jumps to 4.08, past the
# target: the same as multiplying the learning rate by K. S1's snippet shows how easily this
# goes unnoticed: it divides the *logged* loss by the number of accumulated steps
# (`scaled_loss / 16`) but not the loss it calls `backward()` on.
#
# How much it hurts depends on the optimizer: plain SGD (with or without momentum) takes
# steps K times too large; Adam-type optimizers divide by a running RMS of the gradient and
# cancel most of a constant factor (not quite: `eps` and weight decay do not scale with it);
# a gradient-clipping threshold tuned for the big batch now sees norms K times larger and
# clips where it should not.
#
# ## The fix
# Divide each micro-batch loss by K before `backward()`, so the K gradients add up to their
# mean. This is exact when the micro-batches have equal sizes and the loss is a mean; with
# unequal sizes, weight each loss by its share of the samples (or sum the per-sample losses
# and divide by the total count).


# %%
def fixed(device):
    w = torch.zeros(1, device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    opt.zero_grad()
    for x, y in micro_batches(device):
        loss = ((w * x - y) ** 2).mean() / K  # each micro-batch carries 1/K of the big batch
        loss.backward()
    opt.step()
    return w.detach()


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's training notes present gradient accumulation as the standard trick to simulate a
# 16-times larger batch: sixteen forward/backward passes, one optimizer step. Its code calls
# `backward()` on the unscaled loss and only rescales the number it reports afterwards. S2
# explains the same trick from the other side: without `zero_grad()` the gradients of
# successive `backward()` calls pile up, which it equates with training on a larger batch —
# true of the sum of the gradients, not of the mean that a larger batch would give.
#
# Accumulation itself is documented behaviour ("This function accumulates gradients in the
# leaves", already in the 0.4.0 autograd docs) and no release changed it. PyTorch's own recipe
# (the "Gradient accumulation" section of the Automatic Mixed Precision examples) divides each
# loss by `iters_to_accumulate` before `backward()`; NVIDIA/apex#286 records a maintainer saying
# that amp accumulates unscaled gradients and does not divide by the number of steps for you, and
# pytorch/ignite#583 shows the same division in a library FAQ.

# %% [markdown]
# ## How the harness checks it
#
# Overshooting is not always this pitfall. Here each loss *is* divided by K, but `.grad` is
# never cleared between optimizer steps (the case `missing-zero-grad`): the first step is
# right (1.02), the second adds a fresh gradient to the stale one and lands at 2.54, past the
# true slope 2. No step is K times the full-batch step.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1, S2


def symptom(run):
    """The step is K times the full-batch step (the sum of K mean-gradients, not their mean)."""
    if run.error is not None:
        return False
    step = run.value.item()
    return abs(step - K * full_batch_step()) < 1e-4 and abs(step - full_batch_step()) > 1e-2


def near_miss(device):
    w = torch.zeros(1, device=device, requires_grad=True)
    opt = torch.optim.SGD([w], lr=LR)
    for _ in range(2):  # two optimizer steps, no zero_grad() anywhere
        for x, y in micro_batches(device):
            loss = ((w * x - y) ** 2).mean() / K
            loss.backward()
        opt.step()
    return w.detach()


def check(run, device):
    """The weight moved by exactly one SGD step on the full batch, computed by hand (1.02)."""
    torch.testing.assert_close(run.value, torch.tensor([full_batch_step()], device=device))


CASE = Case(
    id="grad-accumulation-unscaled",
    title="Gradient accumulation without dividing the loss",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Training with accumulated micro-batches is less stable: the gradient is K times too big.",
    # `.grad` accumulates across backward() calls by design, as far back as autograd goes (the
    # 0.4.0 autograd docs say so, the Variable-era docs too): no known lower bound. No release
    # changed it; observed here on 2.13.0.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("'炼丹心得': the Accumulating Gradients snippet (16 backward calls, one step)"),
        S2.at("section '进行梯度累积' (gradient accumulation for a large batch size)"),
    ),
    tags=("training", "optimizer", "grad_accumulation", "loss_scaling"),
    references=(
        # The AMP examples' gradient-accumulation recipe divides each loss by iters_to_accumulate.
        "https://github.com/pytorch/pytorch/blob/0483d09a734aa95e616d3af90ea1973d4e4d4d2c/docs/source/notes/amp_examples.rst",
        "https://pytorch.org/docs/0.4.0/autograd",  # "accumulates gradients in the leaves"
        "https://github.com/NVIDIA/apex/issues/286",  # amp does not divide by the number of steps for you
        "https://github.com/pytorch/ignite/issues/583",  # a library FAQ recipe with `loss / accumulation_steps`
    ),
)
