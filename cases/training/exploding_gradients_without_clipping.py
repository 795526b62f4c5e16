# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Exploding gradients, and no clipping to catch them
#
# A recurrent network starts training, and the printed loss goes from 0.3 to 5 in three steps,
# passes a hundred at the fifth and five million at the eighth, gains two orders of magnitude
# per step after that and from step 21 on reads `inf`, then `nan`. Nothing in the code changed
# between those steps. The gradient did: back-propagated through 40 time steps of a recurrent
# weight whose singular values are above one, its norm jumped from about ten to over a
# thousand in one step, and plain SGD took a step of that size. One line, `clip_grad_norm_`,
# bounds every step, and the same network trains on with finite losses that stay near where
# they started.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# An Elman RNN (tanh) reads 40 steps of a noisy signal and a linear head predicts the mean of the
# last two inputs. The recurrent weight is initialised orthogonal with gain 1.5 (every singular
# value 1.5): a little too large, as an init or a few training steps can make it. SGD, learning
# rate 0.3, 30 steps, nothing between `backward()` and `step()`.

# %%
STEPS, SEQ, BATCH, HIDDEN = 30, 40, 16, 32
LR, MAX_NORM, GAIN = 0.3, 1.0, 1.5


def setup(device):
    with seeded(0):
        rnn = nn.RNN(1, HIDDEN, nonlinearity="tanh")
        head = nn.Linear(HIDDEN, 1)
        with torch.no_grad():
            nn.init.orthogonal_(rnn.weight_hh_l0, gain=GAIN)
        x = torch.randn(SEQ, BATCH, 1)
    y = (x[-1] + x[-2]) / 2
    return rnn.to(device), head.to(device), x.to(device), y.to(device)


def train(device, clip, x_fault=None):
    rnn, head, x, y = setup(device)
    if x_fault is not None:
        x = x_fault(x)
    params = [*rnn.parameters(), *head.parameters()]
    opt = torch.optim.SGD(params, lr=LR)
    losses, grad_norms, step_norms = [], [], []
    for _ in range(STEPS):
        opt.zero_grad()
        out, _ = rnn(x)
        loss = F.mse_loss(head(out[-1]), y)
        loss.backward()
        grads = [p.grad for p in params]
        grad_norms.append(torch.linalg.vector_norm(torch.stack([g.norm() for g in grads])).item())
        if clip:
            nn.utils.clip_grad_norm_(params, max_norm=MAX_NORM)
        before = [p.detach().clone() for p in params]
        opt.step()
        moved = torch.stack([(p.detach() - b).norm() for p, b in zip(params, before)])
        step_norms.append(torch.linalg.vector_norm(moved).item())
        losses.append(loss.item())
    return {"losses": losses, "grad_norms": grad_norms, "step_norms": step_norms}


def broken(device):
    return train(device, clip=False)


# %%
if __name__ == "__main__":
    result = observe(broken, "cpu")
    print(result.value["losses"][::10] if result.value else result)

# %% [markdown]
# ## Why
# The gradient that reaches the recurrent weight is a sum over time steps, and the term from
# step t has been multiplied by the recurrent Jacobian once per step between t and the loss.
# When that Jacobian stretches vectors (a singular value above one, where tanh is not
# saturated) the product grows geometrically with the distance: over 40 steps a factor of 1.5
# is a factor of about 10^7. The first steps stay in a calm region, then one lands near a
# "cliff" of the loss surface, the gradient norm jumps a hundredfold, and SGD moves the
# weights by the learning rate times that norm. The weights land where the loss is enormous,
# the next gradient is larger still, and a few steps later the numbers overflow to `inf` and
# `inf - inf` gives `nan`. A smaller learning rate only postpones the cliff.
#
# ## The fix
# Clip the gradient's global norm between `backward()` and `step()`:
# `torch.nn.utils.clip_grad_norm_(params, max_norm=1.0)` rescales all gradients together when
# their norm exceeds `max_norm`, so no single step can move the weights by more than
# `lr * max_norm`, while keeping the gradient's direction. Log the norm it returns: a norm that
# keeps hitting the limit says the learning rate or the initialisation needs attention too.


# %%
def fixed(device):
    return train(device, clip=True)


# %%
if __name__ == "__main__":
    result = observe(fixed, "cpu")
    print(result.value["losses"][::10] if result.value else result)

# %% [markdown]
# ## Where it comes from
# Exploding gradients are named by the run-time checking tools for PyTorch that watch gradient
# norms: torch-audit's rule "Gradient Explosion", guardtower's catalogue entry "Exploding
# gradient norm" and torchtest2's gradient-magnitude check; Humbatova et al.'s taxonomy of
# real faults in deep-learning programs (ICSE 2020) lists a suboptimal learning rate among
# the training faults. The mechanism (products of Jacobians over time, and norm clipping as the
# remedy) is the subject of Pascanu, Mikolov and Bengio, "On the difficulty of training
# recurrent neural networks" (ICML 2013). PyTorch documents `clip_grad_norm_` (and, for mixed
# precision, that gradients must be unscaled before clipping) in its AMP examples. No torch
# release changes any of this.

# %% [markdown]
# ## How the harness checks it
# A loss that is `nan` from the very first step is not an explosion: a `nan` in the data (here
# one input value) makes every loss `nan` while the first gradient norm is already `nan` too,
# and clipping cannot help. The symptom asks for a finite start, a gradient norm that then
# grows a thousandfold, and a loss that ends non-finite; it refuses the `nan` input.

# %% tags=["hide-cell"]
import math

from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The first loss is finite, the gradient norm later exceeds 1000 times its first value, and
    the training ends with a non-finite loss."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    losses, norms = run.value["losses"], run.value["grad_norms"]
    if not (math.isfinite(losses[0]) and math.isfinite(norms[0])):
        return False
    exploded = any(not math.isfinite(n) or n > 1000 * norms[0] for n in norms)
    return exploded and not math.isfinite(losses[-1])


def near_miss(device):
    def one_nan(x):
        x = x.clone()
        x[3, 0, 0] = float("nan")  # a corrupt sample in the data
        return x

    return train(device, clip=True, x_fault=one_nan)


def check(run, device):
    """Every step moved the weights by lr * min(gradient norm, max_norm), the clipping rule worked
    out from the gradient norm measured before clipping; every loss is finite and none exceeds
    ten times the first (bounded steps: no explosion)."""
    assert run.error is None, f"raised {run.error!r}"
    v = run.value
    for g, s in zip(v["grad_norms"], v["step_norms"]):
        assert math.isfinite(g), "a non-finite gradient"
        expected = LR * min(g, MAX_NORM)
        assert abs(s - expected) <= 1e-3 * expected + 1e-7, (s, expected)
    assert all(math.isfinite(x) for x in v["losses"]), "a non-finite loss"
    assert max(v["losses"]) < 10 * v["losses"][0], (v["losses"][0], max(v["losses"]))


def stable(value):
    """Thirty steps of a chaotic recurrence: keep whether it stayed finite and bounded and whether
    any step was clipped, not the floats."""
    losses, norms = value["losses"], value["grad_norms"]
    return {
        "finite_start": math.isfinite(losses[0]),
        "finite_end": math.isfinite(losses[-1]),
        "bounded": all(math.isfinite(x) for x in losses) and max(losses) < 10 * losses[0],
        "norm_above_max": any(not math.isfinite(n) or n > MAX_NORM for n in norms),
    }


CASE = Case(
    id="exploding-gradients-without-clipping",
    title="Exploding gradients, and no clipping to catch them",
    kind="silent",
    symptom_category="nan-inf",
    symptom_line="The loss jumps by orders of magnitude, then reads nan: an exploding gradient, unclipped.",
    # Gradient arithmetic and SGD: the same on every release.
    affects=(Affects("*", reason="products of recurrent Jacobians; clip_grad_norm_ has existed since 0.4"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="torch-audit RULES.md: TA102 Gradient Explosion",
            url="https://github.com/RMalkiv/torch-audit/blob/main/RULES.md",
        ),
        Source(
            title="guardtower catalogue: GRAD-002 Exploding gradient norm",
            url="https://pypi.org/project/guardtower/",
        ),
        Source(
            title="Pascanu, Mikolov, Bengio: On the difficulty of training recurrent neural networks (ICML 2013)",
            url="https://arxiv.org/abs/1211.5063",
        ),
    ),
    tags=("training", "gradients", "clipping", "rnn", "nan"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.utils.clip_grad_norm_.html",
        "https://docs.pytorch.org/docs/stable/notes/amp_examples.html#gradient-clipping",
        "https://pypi.org/project/torchtest2/",
    ),
)
