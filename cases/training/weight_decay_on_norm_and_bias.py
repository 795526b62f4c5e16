# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Weight decay on LayerNorm gains and biases
#
# A multi-task model is trained with `torch.optim.AdamW(model.parameters(), weight_decay=0.1)`.
# Its auxiliary loss is switched on only after a warm-up, so during the warm-up the auxiliary
# branch gets no signal at all. When the warm-up ends, the branch's LayerNorm is no longer the
# identity it was built as: its gain, initialised to 1 and never touched by a gradient, has
# shrunk to 0.78, and it keeps shrinking for as long as the auxiliary loss stays off. Weight
# decay was meant for the weight matrices; handed `model.parameters()`, it pulls every
# normalisation gain and every bias toward 0 as well.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A shared body, a main regression head, and an auxiliary classification head behind its own
# LayerNorm. The loss is `main + AUX_WEIGHT * aux` with `AUX_WEIGHT = 0.0` for the warm-up
# steps. The optimizer is AdamW over all parameters. The function returns the auxiliary
# LayerNorm's gain and shift, and how much the auxiliary head's weight matrix shrank. (Time is
# compressed: 50 steps at a learning rate of 0.05 decay as much as 25 000 steps at 1e-4.)

# %%
LR = 0.05
WEIGHT_DECAY = 0.1
WARMUP_STEPS = 50
AUX_WEIGHT = 0.0  # the auxiliary task is switched on after the warm-up


class MultiTask(nn.Module):
    def __init__(self):
        super().__init__()
        self.body = nn.Linear(8, 16)
        self.main_head = nn.Linear(16, 1)
        self.aux_norm = nn.LayerNorm(16)
        self.aux_head = nn.Linear(16, 3)

    def forward(self, x):
        h = F.relu(self.body(x))
        return self.main_head(h), self.aux_head(self.aux_norm(h))


def batch(device):
    g = torch.Generator().manual_seed(0)
    x = torch.randn(64, 8, generator=g)
    y = x.sum(dim=1, keepdim=True)
    labels = torch.randint(0, 3, (64,), generator=g)
    return x.to(device), y.to(device), labels.to(device)


def warm_up(device, model, param_groups, aux_weight=AUX_WEIGHT):
    x, y, labels = batch(device)
    aux_start = model.aux_head.weight.detach().clone()
    opt = torch.optim.AdamW(param_groups, lr=LR, weight_decay=WEIGHT_DECAY)
    for _ in range(WARMUP_STEPS):
        opt.zero_grad()
        main, aux = model(x)
        loss = F.mse_loss(main, y) + aux_weight * F.cross_entropy(aux, labels)
        loss.backward()  # the aux branch's gradients are exact zeros while aux_weight == 0
        opt.step()
    return {
        "aux_norm_weight": model.aux_norm.weight.detach().clone(),
        "aux_norm_bias": model.aux_norm.bias.detach().clone(),
        "aux_head_shrink": (model.aux_head.weight.norm() / aux_start.norm()).item(),
    }


def broken(device):
    with seeded(0):
        model = MultiTask().to(device)
    return warm_up(device, model, model.parameters())


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# AdamW applies the decay directly to the parameter: every step multiplies it by `1 - lr *
# weight_decay`, and then adds Adam's update, which is computed from the gradient alone. A
# parameter whose gradient is zero gets no Adam update, but the multiplication still happens:
# after 50 steps the gain is `(1 - 0.05 · 0.1)^50 = 0.7783`, exactly what the code returns, and
# nothing about the data asked for it. With a non-zero gradient the decay keeps pulling in the
# same direction, and it wins wherever the gradient's direction is noisy, as it is for most of a
# long run: Adam's updates then average out, the decay does not.
#
# Decay is a prior: "smaller is simpler". For a weight matrix that is a reasonable belief, but
# not for a normalisation gain, whose neutral value is 1 (it rescales the normalised
# activations; pulling it toward 0 shrinks the layer's output), nor for a bias or a norm's
# shift, whose right value is wherever the data's offset is. They are also few: decaying them
# regularises almost nothing.
#
# ## The fix
# Give the optimizer two parameter groups: the weight matrices (and convolution kernels) with
# decay, and the biases and every normalisation parameter with `weight_decay=0`. Splitting by
# dimension is the usual shortcut (1-D tensors are biases and norm parameters); minGPT's
# `configure_optimizers` splits by module type instead, which also keeps embeddings out if you
# want that. With the fix the LayerNorm stays exactly the identity it was built as while its
# gradient is zero, and the auxiliary head's weights still decay, by the same factor as before.
# The check asserts both, against values written out by hand.


# %%
def no_decay_for_norms_and_biases(model):
    decay = [p for p in model.parameters() if p.dim() >= 2]
    no_decay = [p for p in model.parameters() if p.dim() < 2]
    return [{"params": decay}, {"params": no_decay, "weight_decay": 0.0}]


def fixed(device):
    with seeded(0):
        model = MultiTask().to(device)
    return warm_up(device, model, no_decay_for_norms_and_biases(model))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# torch-audit has a rule for it, TA402 "Weight Decay on Norm/Bias": weight decay applied to
# normalisation layers or bias terms, fixed by `weight_decay=0.0` for those parameter groups.
# The PyTorch Forums thread "Weight decay in the optimizers is a bad idea (especially with
# BatchNorm)" collects the usual helper, which puts every 1-D parameter (BatchNorm parameters
# and biases) in a group without decay, and the thread "Weight decay only for weights of
# nn.Linear and nn.Conv*" asks how to build those groups when the layers sit inside
# `nn.Sequential`. The original BERT optimizer excludes `bias` and LayerNorm weights from decay
# (Hugging Face's examples copy its list), and minGPT's `configure_optimizers` does it by module
# type. PyTorch's optimizers take per-parameter options through parameter groups (the
# `torch.optim` documentation) and apply one `weight_decay` to the whole group they are given;
# no release has changed that.

# %% [markdown]
# ## How the harness checks it
# A LayerNorm gain below 1 is not by itself this pitfall: once the auxiliary loss is on, its
# gradient moves the gain wherever the task wants it, with or without decay. The symptom asks
# for the signature of decay acting alone, every gain equal to `(1 - lr · wd)^steps`, and does
# not claim a gain the data moved.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def decayed(steps=WARMUP_STEPS):
    return (1 - LR * WEIGHT_DECAY) ** steps


def symptom(run):
    """Every gain of the auxiliary LayerNorm equals (1 - lr·wd)^steps, below 1: decay moved it
    with a zero gradient."""
    if run.error is not None:
        return False
    gain = run.value["aux_norm_weight"]
    target = torch.full_like(gain, decayed())
    return bool(torch.allclose(gain, target, rtol=1e-4, atol=0)) and decayed() < 1


def near_miss(device):
    """The groups are right, but the auxiliary loss is on from the start: the gain moves with
    the data."""
    with seeded(0):
        model = MultiTask().to(device)
    return warm_up(device, model, no_decay_for_norms_and_biases(model), aux_weight=1.0)


def check(run, device):
    """The LayerNorm that had a zero gradient is still exactly the identity it was built as
    (gain 1, shift 0), while the auxiliary head's weight matrix, which also had a zero
    gradient, shrank by (1 - lr·wd)^steps = 0.995^50: decay is still on for weights."""
    assert run.error is None, f"raised {run.error!r}"
    gain, shift = run.value["aux_norm_weight"], run.value["aux_norm_bias"]
    torch.testing.assert_close(gain, torch.ones_like(gain), rtol=0, atol=0)
    torch.testing.assert_close(shift, torch.zeros_like(shift), rtol=0, atol=0)
    assert abs(run.value["aux_head_shrink"] - decayed()) < 1e-4, run.value["aux_head_shrink"]


def stable(value):
    """The gains and the shrink factor to 4 significant digits."""
    return {
        "aux_norm_weight": sorted({float(f"{g:.4g}") for g in value["aux_norm_weight"].tolist()}),
        "aux_norm_bias_zero": bool((value["aux_norm_bias"] == 0).all()),
        "aux_head_shrink": float(f"{value['aux_head_shrink']:.4g}"),
    }


CASE = Case(
    id="weight-decay-on-norm-and-bias",
    title="Weight decay on LayerNorm gains and biases",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="AdamW shrinks a LayerNorm gain from 1 to 0.78 while its gradient is zero: decay was given every parameter.",
    # AdamW's decoupled decay multiplies every parameter of the group by (1 - lr*wd) per step;
    # the parameter-group API and this rule are the same on every release of the matrix.
    affects=(Affects("*", reason="decoupled decay scales every parameter of its group; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="torch-audit (RULES.md), rule TA402: Weight Decay on Norm/Bias",
            url="https://github.com/RMalkiv/torch-audit",
        ),
        Source(
            title="PyTorch Forums: Weight decay in the optimizers is a bad idea (especially with BatchNorm)",
            url="https://discuss.pytorch.org/t/weight-decay-in-the-optimizers-is-a-bad-idea-especially-with-batchnorm/16994",
        ),
        Source(
            title="PyTorch Forums: Weight decay only for weights of nn.Linear and nn.Conv*",
            url="https://discuss.pytorch.org/t/weight-decay-only-for-weights-of-nn-linear-and-nn-conv/114348",
        ),
    ),
    tags=("training", "optimizer", "weight_decay", "layernorm", "adamw"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.optim.AdamW.html",
        "https://docs.pytorch.org/docs/stable/optim.html#per-parameter-options",
        "https://github.com/karpathy/minGPT/blob/master/mingpt/model.py",  # configure_optimizers
    ),
)
