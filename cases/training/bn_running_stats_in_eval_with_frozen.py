# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A frozen backbone's BatchNorm keeps learning its statistics
#
# You fine-tune only a new head on top of a pretrained backbone: every backbone parameter gets
# `requires_grad = False`, the optimizer sees only the head, and a check after training
# confirms that no backbone weight moved. Yet the backbone's features are not what they were:
# the same image gives different embeddings before and after, and the pretrained model
# evaluated on its original task has got worse. The BatchNorm layers inside the "frozen"
# backbone replaced their running mean and variance with statistics of the new data.

# %%
import torch
import torch.nn.functional as F
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A backbone (linear layer, `BatchNorm1d`, ReLU) taken as pretrained, with running mean 0 and
# variance 1, and a new linear head. The backbone's parameters are frozen, the optimizer gets
# the head's, and the model trains for five steps in training mode, as every loop does, on
# data whose features are centred near 3 rather than 0.

# %%
STEPS, LR = 5, 0.1
PROBE = [[0.5, -1.0, 2.0]]


def build(device):
    with seeded(0):
        backbone = nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.ReLU())
        head = nn.Linear(4, 1)
    return backbone.to(device), head.to(device)


def batch(step, device):
    x = 3.0 + torch.randn(16, 3, generator=torch.Generator().manual_seed(step))
    return x.to(device), x.sum(dim=1, keepdim=True).to(device)


def fine_tune(device, keep_backbone_in_eval):
    backbone, head = build(device)
    model = nn.Sequential(backbone, head)
    for p in backbone.parameters():
        p.requires_grad = False  # "frozen"
    weights_before = [p.detach().clone() for p in backbone.parameters()]
    stats_before = backbone[1].running_mean.clone()
    opt = torch.optim.SGD(head.parameters(), lr=LR)
    for step in range(STEPS):
        model.train()  # the usual start of an epoch
        if keep_backbone_in_eval:
            backbone.eval()
        x, y = batch(step, device)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    backbone.eval()
    with torch.no_grad():
        features = backbone(torch.tensor(PROBE, device=device))
    return {
        "backbone_weights_unchanged": all(torch.equal(a, b) for a, b in zip(weights_before, backbone.parameters())),
        "running_mean_shift": (backbone[1].running_mean - stats_before).abs().max().item(),
        "batches_tracked": backbone[1].num_batches_tracked.item(),
        "features": features,
    }


def broken(device):
    return fine_tune(device, keep_backbone_in_eval=False)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `requires_grad = False` concerns gradients: autograd stops computing them and the optimizer
# has nothing to apply. A BatchNorm layer's running mean and variance are not parameters and
# get no gradients; they are buffers that the layer overwrites itself during every forward
# pass in training mode (`new = 0.9 * old + 0.1 * batch statistic`), and `model.train()`
# puts every submodule, the frozen backbone included, in training mode. So each training step
# pulls the pretrained statistics towards those of the new data, and in training mode the
# backbone also normalizes with the current batch's statistics rather than its stored ones.
# After five batches centred near 3, the stored means have moved far from their pretrained
# values, and so has everything downstream of them.
#
# ## The fix
# Put the frozen part in evaluation mode, and do it *after* every `model.train()` call,
# because that call switches it back: `model.train(); backbone.eval()`. (Overriding the
# model's `train()` method to re-apply it is a common way to make it stick.) In evaluation
# mode BatchNorm normalizes with its stored statistics and leaves them alone; gradients
# still flow through it to anything trainable below.


# %%
def fixed(device):
    return fine_tune(device, keep_backbone_in_eval=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#86590 ("Easy way to 'freeze' BatchNorm running_mean/running_var") describes
# exactly this: parameters frozen with `requires_grad = False`, yet every BatchNorm statistic
# changed after training, with the remark that many codebases do not realise their feature
# extractor is not fully frozen. Reports in downstream projects follow the same pattern
# (isht7/pytorch-deeplab-resnet#39, where the answer is to train with the layers in eval mode;
# pgniewko/gt-pyg#112, where a `freeze()` put BatchNorm in eval mode only until the next
# `model.train()`), and a discuss.pytorch.org thread on training only a custom head asks
# whether `requires_grad = False` stops the statistics from updating; it does not. The
# `BatchNorm` documentation describes the buffers and their update in training mode. No
# release changed it.

# %% [markdown]
# ## How the harness checks it
# The symptom needs both halves: backbone weights bit-for-bit unchanged (the freeze worked)
# and running statistics that moved. Fine-tuning the whole network, nothing frozen, also
# moves the statistics, but it moves the weights too: that is ordinary training, and the
# symptom refuses it. The fix's check recomputes the backbone's features on a probe input by
# hand from its weights and the pretrained statistics (mean 0, variance 1).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Frozen weights unchanged, but the BatchNorm counted STEPS batches and its running mean
    moved (by more than 0.1)."""
    if run.error is not None:
        return False
    seen = run.value
    return seen["backbone_weights_unchanged"] and seen["batches_tracked"] == STEPS and seen["running_mean_shift"] > 0.1


def near_miss(device):
    backbone, head = build(device)
    model = nn.Sequential(backbone, head)
    weights_before = [p.detach().clone() for p in backbone.parameters()]
    stats_before = backbone[1].running_mean.clone()
    opt = torch.optim.SGD(model.parameters(), lr=LR)  # full fine-tuning, nothing frozen
    model.train()
    for step in range(STEPS):
        x, y = batch(step, device)
        opt.zero_grad()
        F.mse_loss(model(x), y).backward()
        opt.step()
    return {
        "backbone_weights_unchanged": all(torch.equal(a, b) for a, b in zip(weights_before, backbone.parameters())),
        "running_mean_shift": (backbone[1].running_mean - stats_before).abs().max().item(),
        "batches_tracked": backbone[1].num_batches_tracked.item(),
        "features": None,
    }


def check(run, device):
    """No batch counted, and the features equal the backbone computed by hand with the
    pretrained statistics: relu((x W^T + b - 0) / sqrt(1 + eps) * gamma + beta)."""
    seen = run.value
    assert seen["backbone_weights_unchanged"] and seen["batches_tracked"] == 0, seen
    backbone, _ = build(device)
    lin, bn = backbone[0], backbone[1]
    x = torch.tensor(PROBE, device=device)
    with torch.no_grad():
        z = x @ lin.weight.T + lin.bias
        expected = torch.clamp((z - 0.0) / (1.0 + bn.eps) ** 0.5 * bn.weight + bn.bias, min=0.0)
    torch.testing.assert_close(seen["features"], expected)


CASE = Case(
    id="bn-running-stats-in-eval-with-frozen",
    title="A frozen backbone's BatchNorm keeps learning its statistics",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A backbone frozen with requires_grad=False gives other features after fine-tuning: BatchNorm stats moved.",
    # Buffers updated by the training-mode forward, independent of requires_grad, since BatchNorm exists.
    affects=(
        Affects("*", reason="running statistics are buffers updated in training mode, whatever requires_grad says"),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title='pytorch/pytorch#86590: Easy way to "freeze" BatchNorm running_mean/running_var',
            url="https://github.com/pytorch/pytorch/issues/86590",
        ),
        Source(
            title="isht7/pytorch-deeplab-resnet#39: Frozen the statistics of BN?",
            url="https://github.com/isht7/pytorch-deeplab-resnet/issues/39",
        ),
        Source(
            title="pgniewko/gt-pyg#112: freeze() BatchNorm eval mode is reset by the next model.train()",
            url="https://github.com/pgniewko/gt-pyg/issues/112",
        ),
        Source(
            title="discuss.pytorch.org: Should I run update_bn() when training only a custom head while "
            "freezing the pretrained backbone?",
            url="https://discuss.pytorch.org/t/should-i-run-update-bn-when-training-only-a-custom-head-while-freezing-the-pretrained-backbone/224010",
        ),
    ),
    tags=("batchnorm", "running_stats", "fine_tuning", "requires_grad", "eval"),
    references=("https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm1d.html",),
)
