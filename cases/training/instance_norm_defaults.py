# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # InstanceNorm's defaults are not BatchNorm's
#
# A style-transfer or small-batch paper says "replace BatchNorm with InstanceNorm", so you
# swap `nn.BatchNorm2d(C)` for `nn.InstanceNorm2d(C)`. Everything runs and the shapes match,
# but the model has silently lost 2·C learnable parameters per layer: every channel now
# leaves the layer with mean 0 and variance 1, whatever the training wants, and nothing
# about the layer is saved in the checkpoint.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# The same block twice, once with each norm layer, built with the one argument you would
# pass to either: the number of channels.

# %%
C = 4


def norm_layer_report(norm):
    return {
        "parameters": sum(p.numel() for p in norm.parameters()),
        "state_dict": sorted(norm.state_dict()),
        "affine": getattr(norm, "affine", None),
        "track_running_stats": getattr(norm, "track_running_stats", None),
    }


def broken(device):
    with seeded(0):
        block = nn.Sequential(nn.Conv2d(3, C, 3), nn.InstanceNorm2d(C), nn.ReLU()).to(device)
    return norm_layer_report(block[1])


# %%
if __name__ == "__main__":
    print("InstanceNorm2d:", observe(broken, "cpu"))
    print("BatchNorm2d:   ", norm_layer_report(nn.BatchNorm2d(C)))

# %% [markdown]
# ## Why
# The two layers share their code but not their defaults. `BatchNorm2d(C)` means
# `affine=True, track_running_stats=True`: a learnable per-channel scale γ and shift β, and
# running mean/variance used in `eval()`. `InstanceNorm2d(C)` means
# `affine=False, track_running_stats=False`: no γ and β at all, and the statistics of each
# sample are used in training and evaluation alike. Without γ and β the layer is a fixed
# standardisation: the next layer always receives each channel with mean 0 and variance 1,
# and after a ReLU about half of it is zero, which the network cannot learn its way out of.
# (Without running statistics `num_features` is not even used; a wrong value only draws a
# warning.) Nothing fails, so the swap looks complete.
#
# ## The fix
# Ask for what you want explicitly: `nn.InstanceNorm2d(C, affine=True)` for the learnable
# scale and shift (what most InstanceNorm papers use), and `track_running_stats=True` only
# if you really want BatchNorm-like running statistics in `eval()` (usually not the point of
# instance normalisation).


# %%
def sample_input(device):
    return torch.arange(2 * C * 3 * 3, dtype=torch.float32, device=device).reshape(2, C, 3, 3) ** 1.5


def fixed(device):
    with seeded(0):
        block = nn.Sequential(nn.Conv2d(3, C, 3), nn.InstanceNorm2d(C, affine=True), nn.ReLU()).to(device)
    norm = block[1]
    report = norm_layer_report(norm)
    with torch.no_grad():  # give γ and β values that show: γ = 2, β = 1
        norm.weight.fill_(2.0)
        norm.bias.fill_(1.0)
        report["out"] = norm(sample_input(device))
    return report


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's notes on Instance Normalization point out both defaults: running statistics are off
# (so the current statistics are used in training and evaluation), and the learnable
# `w·x + b` is off too — where its BatchNorm notes list `affine` as on by default.
#
# Upstream, InstanceNorm arrived in pytorch/pytorch#1283 (2017) with the affine transform
# available but switched off, and #1477 kept `affine=False` as the intended default and fixed the
# docs instead. Before 0.4.0 InstanceNorm still carried running-mean/variance buffers; the 0.4.0
# source drops them by default and tells users loading older checkpoints that InstanceNorm "does
# not track running stats by default since 0.4.0". #58843 shows the other side: with
# `track_running_stats=True`, `eval()` uses the running statistics, and InstanceNorm behaves like
# BatchNorm.

# %% [markdown]
# ## How the harness checks it
#
# A block whose norm layers have nothing to learn and nothing to save can also be a
# registration bug: BatchNorm layers kept in a plain Python list are invisible to
# `parameters()` and `state_dict()` (use `nn.ModuleList`). The layers themselves are fine.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The norm layer has nothing to learn and nothing to save (BatchNorm2d(C) has 2·C and 5
    entries), because both switches are off: affine and track_running_stats."""
    if run.error is not None:
        return False
    return (
        run.value["parameters"] == 0
        and run.value["state_dict"] == []
        and run.value["affine"] is False
        and run.value["track_running_stats"] is False
    )


class ListedNorms(nn.Module):
    def __init__(self):
        super().__init__()
        self.norms = [nn.BatchNorm2d(C), nn.BatchNorm2d(C)]  # a list, not an nn.ModuleList

    def forward(self, x):
        for norm in self.norms:
            x = norm(x)
        return x


def near_miss(device):
    return norm_layer_report(ListedNorms().to(device))


def check(run, device):
    """2·C parameters and exactly weight and bias saved; with γ = 2, β = 1 the output is
    2·(x - mean)/sqrt(var + 1e-5) + 1 per sample and channel, statistics over H×W (biased
    variance), written out here."""
    report = {k: v for k, v in run.value.items() if k != "out"}
    assert report == {
        "parameters": 2 * C,
        "state_dict": ["bias", "weight"],
        "affine": True,
        "track_running_stats": False,
    }, report
    x = sample_input(device)
    mean = x.mean(dim=(2, 3), keepdim=True)
    var = ((x - mean) ** 2).mean(dim=(2, 3), keepdim=True)
    expected = 2.0 * (x - mean) / torch.sqrt(var + 1e-5) + 1.0
    torch.testing.assert_close(run.value["out"], expected)


CASE = Case(
    id="instance-norm-defaults",
    title="InstanceNorm's defaults are not BatchNorm's",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="InstanceNorm in place of BatchNorm silently drops the learnable scale and shift.",
    # affine=False has been InstanceNorm's default since the module was added (pytorch#1283,
    # confirmed in #1477); track_running_stats=False is the default since 0.4.0 (the 0.4.0
    # source says so). Both hold on 2.13.0; no release has changed them since.
    affects=(
        Affects(
            ">=0.4",
            since="the 0.4.0 source: InstanceNorm 'does not track running stats "
            "by default since 0.4.0' (affine=False is older, pytorch#1283)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("notes on Instance Normalization: track_running_stats and affine default to False"),),
    tags=("modules", "normalization", "instance_norm", "defaults"),
    references=(
        "https://github.com/pytorch/pytorch/pull/1283",  # InstanceNorm added, affine switched off by default
        "https://github.com/pytorch/pytorch/pull/1477",  # "InstanceNorm's default affine should be false"
        "https://pytorch.org/docs/0.4.0/_modules/torch/nn/modules/instancenorm.html",  # no running stats by default since 0.4.0
        "https://github.com/pytorch/pytorch/issues/58843",  # with track_running_stats=True, eval() uses running stats
    ),
)
