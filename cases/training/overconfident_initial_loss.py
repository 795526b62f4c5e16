# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # An over-confident classifier at initialisation
#
# A ten-class classifier prints its first loss: 10.8. Over the next few hundred steps the loss
# plunges, then settles into the slow decline you expected from the start; the curve looks like
# a hockey stick. Nothing crashed, but those first steps were spent undoing the initialisation,
# not learning: an untrained classifier that knows nothing should guess every class with about
# the same probability, and then its cross-entropy is `ln(10) = 2.30`, not 10.8. The last layer
# was initialised with weights far too large, so the network starts out certain of random
# answers.

# %%
import math

import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A two-layer classifier for 10 classes on 256 samples of 64 features. The head's weights are
# drawn from a standard normal, `nn.init.normal_(head.weight, std=1.0)`, the way a from-scratch
# tutorial initialises a weight matrix with `torch.randn`. The function measures the loss before
# any training step.

# %%
CLASSES = 10
FEATURES = 64
HIDDEN = 256


def batch(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(256, FEATURES, generator=g)
    y = torch.randint(0, CLASSES, (256,), generator=g)
    return x.to(device), y.to(device)


def classifier():
    return nn.Sequential(nn.Linear(FEATURES, HIDDEN), nn.ReLU(), nn.Linear(HIDDEN, CLASSES))


def loss_at_init(model, device):
    x, y = batch(device)
    with torch.no_grad():
        logits = model(x)
        probs = torch.softmax(logits, dim=1)
        return {
            "initial_loss": F.cross_entropy(logits, y).item(),
            "ln_classes": math.log(CLASSES),
            "head_weight_std": model[2].weight.std().item(),
            "mean_top_probability": probs.max(dim=1).values.mean().item(),
        }


def broken(device):
    with seeded(0):
        model = classifier()
        nn.init.normal_(model[2].weight, std=1.0)  # "weights ~ N(0, 1)"
    return loss_at_init(model.to(device), device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The head computes each logit as a sum over 256 hidden units. With weights of standard
# deviation 1, the logits' spread grows with the square root of the width and the size of the
# hidden activations: here the ten logits of one sample span about 20 units, so the softmax puts
# most of its mass (84% on average) on one class, chosen by the random weights. Cross-entropy
# punishes a confident wrong answer with `-log(p)` of the right class, which is large when that
# `p` is tiny: the mean comes out near 11 instead of 2.3. Training then first shrinks the head's
# weights until the predictions are humble again: the first part of the run is spent repairing
# the start, the hockey stick of the loss curve. PyTorch's default for `nn.Linear` draws weights
# from `U(-1/sqrt(fan_in), 1/sqrt(fan_in))`, a standard deviation of 0.036 for this head, 28
# times smaller.
#
# ## The fix
# Keep the head's initial logits small and equal: zero its bias and draw its weights with a
# small standard deviation (or keep PyTorch's default). Then check the loss at initialisation
# before training: it should be close to `ln(C)` for `C` balanced classes (`ln(2) = 0.69` for a
# balanced binary task). The check compares the first loss with `ln(10)` computed by hand.


# %%
def fixed(device):
    with seeded(0):
        model = classifier()
        nn.init.normal_(model[2].weight, std=0.01)
        nn.init.zeros_(model[2].bias)
    return loss_at_init(model.to(device), device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Andrej Karpathy's "A Recipe for Training Neural Networks" (2019) lists "verify loss @ init"
# among the first checks of a new training pipeline: with the final layer initialised correctly,
# a softmax classifier measures `-log(1/n_classes)` at initialisation, and the same reference
# values can be worked out for regression losses; the recipe's "init well" advice adds setting
# the final layer's bias to match the data (for example, to the class frequencies of an
# imbalanced problem). A Cross Validated question, "How to initialize final layer to get a good
# starting loss?", asks how to get there; its answer derives it from the final layer's bias and
# small weights. torchtest2 runs this as its `initial_loss` check and names an over-confident
# initialisation as the bug it catches. The arithmetic is the same on every torch release.

# %% [markdown]
# ## How the harness checks it
# A high first loss has other causes. Raw, unnormalised inputs (see `input-never-normalized`)
# also make every logit large with PyTorch's default head, and the first loss comes out
# enormous; there the head's weights are the default ones, and the symptom, which asks for a
# head whose weights are far larger than the default scale, does not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The loss before training is more than twice ln(C), and the head's weights are more than
    ten times the standard deviation of PyTorch's default init, 1/sqrt(3 * fan_in)."""
    if run.error is not None:
        return False
    v = run.value
    default_std = 1 / math.sqrt(3 * HIDDEN)
    return v["initial_loss"] > 2 * math.log(CLASSES) and v["head_weight_std"] > 10 * default_std


def near_miss(device):
    """A default-initialised head fed raw inputs 255 times too large: a huge first loss, from
    the data, not from the head's init."""
    with seeded(0):
        model = classifier().to(device)
    x, y = batch(device)
    with torch.no_grad():
        logits = model(x * 255)
        probs = torch.softmax(logits, dim=1)
        return {
            "initial_loss": F.cross_entropy(logits, y).item(),
            "ln_classes": math.log(CLASSES),
            "head_weight_std": model[2].weight.std().item(),
            "mean_top_probability": probs.max(dim=1).values.mean().item(),
        }


def check(run, device):
    """The first loss is within 0.02 of ln(10) = 2.302585..., and the mean top probability within
    0.02 of 1/10: the untrained model guesses uniformly, as worked out by hand."""
    assert run.error is None, f"raised {run.error!r}"
    v = run.value
    assert abs(v["initial_loss"] - math.log(10)) < 0.02, f"initial loss {v['initial_loss']} is not ln(10)"
    assert abs(v["mean_top_probability"] - 1 / 10) < 0.02, v["mean_top_probability"]


def stable(value):
    """The losses to three significant digits; the float noise of a matmul is not kept."""
    return {k: float(f"{v:.3g}") for k, v in value.items()}


CASE = Case(
    id="overconfident-initial-loss",
    title="An over-confident classifier at initialisation",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The first loss of a 10-class classifier is 10.8, not ln(10) = 2.3: the head's init is far too large.",
    # Arithmetic of softmax and initial weights, not an API behaviour: no release changes it.
    affects=(Affects("*", reason="the scale of the initial logits is arithmetic; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Andrej Karpathy: A Recipe for Training Neural Networks (2019), 'verify loss @ init'",
            url="https://karpathy.github.io/2019/04/25/recipe/",
        ),
        Source(
            title="Cross Validated: How to initialize final layer to get a good starting loss?",
            url="https://stats.stackexchange.com/questions/606359/how-to-initialize-final-layer-to-get-a-good-starting-loss",
        ),
        Source(
            title="torchtest2: the initial_loss check (over-confident initialisation)",
            url="https://pypi.org/project/torchtest2/",
        ),
    ),
    tags=("training", "initialization", "cross_entropy", "sanity_check"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Linear.html",
        "https://docs.pytorch.org/docs/stable/nn.init.html",
    ),
)
