# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # BatchNorm learns during a "harmless" forward
#
# A trained model gets a quick sanity check before it is saved: one forward pass on a few
# samples, wrapped in `torch.no_grad()` so that "nothing changes". The saved model then
# evaluates worse than it did a minute earlier. The check did change it: in training mode,
# every BatchNorm forward updates the layer's running mean and variance, gradients or not.

# %%
import torch
import torch.nn as nn

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A BatchNorm layer whose training left it with running mean `[1, 2]` and running variance
# `[1, 4]` (round numbers, easy to follow). The sanity check feeds it three samples from
# elsewhere, under `no_grad`, without switching to eval.

# %%
TRAINED_MEAN = [1.0, 2.0]
TRAINED_VAR = [1.0, 4.0]
CHECK_BATCH = [[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]]


def trained_bn(device):
    bn = nn.BatchNorm1d(2).to(device)
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor(TRAINED_MEAN))
        bn.running_var.copy_(torch.tensor(TRAINED_VAR))
    return bn


def state_after(bn, out):
    """What the check left behind: the layer's statistics and its output."""
    return {
        "running_mean": bn.running_mean.clone(),
        "running_var": bn.running_var.clone(),
        "num_batches_tracked": bn.num_batches_tracked.item(),
        "out": out,
    }


def broken(device):
    bn = trained_bn(device)  # still in training mode, as modules start
    with torch.no_grad():  # "nothing can change"
        out = bn(torch.tensor(CHECK_BATCH, device=device))
    return state_after(bn, out)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The running mean and variance are buffers, not parameters: no gradient and no optimizer
# touch them. BatchNorm's forward itself writes them, in place, whenever the module is in
# training mode (and `track_running_stats=True`, the default):
# `running = (1 - momentum) * running + momentum * batch_statistic`, with `momentum=0.1` and
# the unbiased batch variance. `torch.no_grad()` only stops autograd from recording; it does
# not change the mode, so the update happens. Here one small batch (mean `[3, 6]`, unbiased
# variance `[4, 16]`) moves the mean from `[1, 2]` to `[1.2, 2.4]` and the variance from
# `[1, 4]` to `[1.3, 5.2]`, and `num_batches_tracked` counts one more batch. A few such checks
# on unrepresentative data, or a validation loop run in training mode, silently retune every
# BatchNorm layer.
#
# ## The fix
# Put the model in eval mode for any forward that is not training: `model.eval()` (then
# `model.train()` to resume). In eval mode BatchNorm reads its running statistics and never
# writes them, and its output is `(x - running_mean) / sqrt(running_var + eps)` (scale 1,
# shift 0 here).


# %%
def fixed(device):
    bn = trained_bn(device)
    bn.eval()
    with torch.no_grad():
        out = bn(torch.tensor(CHECK_BATCH, device=device))
    return state_after(bn, out)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post warns that in training state BatchNorm's `running_mean` and `running_var` are
# updated as soon as `forward()` is called, unlike ordinary parameters, and refers to a longer
# CSDN article on BatchNorm misuse for the details. The BatchNorm documentation gives the update
# rule and the momentum, and says the running estimates are kept during training and used during
# evaluation; the layer's source (the 2018 `batchnorm.py` linked above) registers `running_mean`,
# `running_var` and `num_batches_tracked` as buffers, not parameters.

# %% [markdown]
# ## How the harness checks it
#
# Statistics that differ from the trained ones are not always this pitfall. A checkpoint saved
# from a `DataParallel` model has every key prefixed with `module.`; loaded with `strict=False`
# into the bare model, nothing matches, nothing is loaded, and the layer keeps a fresh layer's
# `[0, 0]` and `[1, 1]`, though no forward ever ran in training mode.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S2


def symptom(run):
    """One batch was counted and the running mean took one momentum step (0.1) from the trained
    mean towards the check batch's mean: [1, 2] became [1.2, 2.4]."""
    if run.error is not None:
        return False
    batch_mean = [sum(col) / len(col) for col in zip(*CHECK_BATCH)]
    stepped = torch.tensor([0.9 * t + 0.1 * b for t, b in zip(TRAINED_MEAN, batch_mean)])
    return run.value["num_batches_tracked"] == 1 and torch.allclose(run.value["running_mean"].cpu(), stepped)


def near_miss(device):
    saved = {"module." + k: v for k, v in trained_bn(device).state_dict().items()}
    bn = nn.BatchNorm1d(2).to(device)
    bn.load_state_dict(saved, strict=False)  # no key matches, and strict=False says nothing
    bn.eval()
    with torch.no_grad():
        out = bn(torch.tensor(CHECK_BATCH, device=device))
    return state_after(bn, out)


def check(run, device):
    """The statistics are still the trained constants, no batch was counted, and the output is
    (x - mean) / sqrt(var + 1e-5) (the documented default eps), written out from the constants."""
    mean = torch.tensor(TRAINED_MEAN, device=device)
    var = torch.tensor(TRAINED_VAR, device=device)
    torch.testing.assert_close(run.value["running_mean"], mean, rtol=0, atol=0)
    torch.testing.assert_close(run.value["running_var"], var, rtol=0, atol=0)
    assert run.value["num_batches_tracked"] == 0, run.value["num_batches_tracked"]
    x = torch.tensor(CHECK_BATCH, device=device)
    torch.testing.assert_close(run.value["out"], (x - mean) / (var + 1e-5).sqrt())


CASE = Case(
    id="batchnorm-updates-in-forward",
    title='BatchNorm learns during a "harmless" forward',
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The model evaluates worse after a forward pass under no_grad: BatchNorm's statistics moved.",
    # Running statistics have been updated inside BatchNorm's training-mode forward since the
    # layer was written; observed on 2.13.0. No release changed it.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(S2.at("section '悄悄地更新,BN层就是个小可爱' (BN quietly updates itself)"),),
    tags=("nn_module", "batchnorm", "running_stats", "eval", "no_grad"),
    references=(
        "https://pytorch.org/docs/stable/generated/torch.nn.BatchNorm2d.html",
        "https://android.googlesource.com/platform/external/pytorch/+/d6bfc53b9e/torch/nn/modules/batchnorm.py",
    ),
)
