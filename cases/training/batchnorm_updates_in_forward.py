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

from harness import Case, observe
from harness.sources import S2

CASE = Case(
    id="batchnorm-updates-in-forward",
    title="BatchNorm learns during a \"harmless\" forward",
    kind="silent",
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

# %% [markdown]
# ## The broken code
# A BatchNorm layer whose training left it with running mean `[0, 0]` and running variance
# `[1, 1]` (the values a fresh layer starts with, so they are easy to follow). The sanity
# check feeds it three samples from elsewhere, under `no_grad`, without switching to eval.

# %%
TRAINED_MEAN = [0.0, 0.0]
TRAINED_VAR = [1.0, 1.0]
CHECK_BATCH = [[1.0, 2.0], [3.0, 6.0], [5.0, 10.0]]


def trained_bn(device):
    bn = nn.BatchNorm1d(2).to(device)
    with torch.no_grad():
        bn.running_mean.copy_(torch.tensor(TRAINED_MEAN))
        bn.running_var.copy_(torch.tensor(TRAINED_VAR))
    return bn


def broken(device):
    bn = trained_bn(device)                 # still in training mode, as modules start
    with torch.no_grad():                   # "nothing can change"
        bn(torch.tensor(CHECK_BATCH, device=device))
    return {"running_mean": bn.running_mean.clone(), "running_var": bn.running_var.clone()}


def symptom(run):
    """The running statistics moved away from the trained ones."""
    trained = torch.tensor(TRAINED_MEAN, device=run.value["running_mean"].device)
    return run.error is None and not torch.equal(run.value["running_mean"], trained)


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
# not change the mode, so the update happens. Here one small batch moves the mean from
# `[0, 0]` to `[0.3, 0.6]` and the variance from `[1, 1]` to `[1.3, 2.5]`, and
# `num_batches_tracked` counts one more batch. A few such checks on unrepresentative data, or
# a validation loop run in training mode, silently retune every BatchNorm layer.
#
# ## The fix
# Put the model in eval mode for any forward that is not training: `model.eval()` (then
# `model.train()` to resume). In eval mode BatchNorm reads its running statistics and never
# writes them, and its output is `(x - running_mean) / sqrt(running_var + eps)` (scale 1,
# shift 0 here), which we check by hand along with the untouched statistics.

# %%
def fixed(device):
    bn = trained_bn(device)
    bn.eval()
    x = torch.tensor(CHECK_BATCH, device=device)
    with torch.no_grad():
        out = bn(x)
    mean = torch.tensor(TRAINED_MEAN, device=device)
    var = torch.tensor(TRAINED_VAR, device=device)
    torch.testing.assert_close(bn.running_mean, mean, rtol=0, atol=0)
    torch.testing.assert_close(bn.running_var, var, rtol=0, atol=0)
    assert bn.num_batches_tracked.item() == 0
    torch.testing.assert_close(out, (x - mean) / (var + bn.eps).sqrt())
    return {"running_mean": bn.running_mean.clone(), "running_var": bn.running_var.clone()}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post warns that in training state BatchNorm's `running_mean` and `running_var`
# are updated as soon as `forward()` is called, unlike ordinary parameters, and refers to a
# longer CSDN article on BatchNorm misuse for the details. The BatchNorm documentation gives
# the update rule and the momentum, and says the running estimates are kept during training
# and used during evaluation; the layer's source (the 2018 `batchnorm.py` linked above)
# registers `running_mean`, `running_var` and `num_batches_tracked` as buffers, not
# parameters. No release changed this; the CUDA side was not observed by this project's runs.
