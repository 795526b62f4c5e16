# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A batch-first tensor fed to an RNN that expects time first
#
# The data loader yields sequences as `(batch, seq, feature)`, the way most code lays them
# out, and they go straight into `nn.LSTM(...)` built with the default `batch_first=False`.
# Nothing fails: the output even has the shape you expected, `(batch, seq, hidden)`. But the
# LSTM read the batch axis as time and the time axis as the batch, so each "sample" you take
# out of the result was computed from other samples' data, and a model trained this way
# learns from sequences that never existed.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A batch of 2 sequences, 3 steps each, 4 features. The last time step of the output is taken
# as each sequence's summary. To see what each summary depends on, differentiate one sample's
# summary with respect to the whole input batch (Karpathy's "use backprop to chart
# dependencies"): in a correct model, only that sample's own input gets a gradient.

# %%
BATCH, SEQ, FEATURES, HIDDEN = 2, 3, 4, 5


def lstm_and_batch(device, batch_first):
    with seeded(0):
        lstm = nn.LSTM(FEATURES, HIDDEN, batch_first=batch_first)
        x = torch.randn(BATCH, SEQ, FEATURES)  # (batch, seq, feature) from the loader
    return lstm.to(device), x.to(device)


def summaries_and_dependencies(lstm, x):
    x = x.clone().requires_grad_(True)
    out, _ = lstm(x)
    last = out[:, -1, :]  # "each sequence's last step"
    (grad_1_from_0,) = torch.autograd.grad(last[1].sum(), x, retain_graph=True)
    (grad_0_from_1,) = torch.autograd.grad(last[0].sum(), x)
    return {
        "output_shape": tuple(out.shape),
        "last": last.detach(),
        "sample_1_depends_on_sample_0": grad_1_from_0[0].abs().sum().item(),
        "sample_0_depends_on_sample_1": grad_0_from_1[1].abs().sum().item(),
    }


def broken(device):
    lstm, x = lstm_and_batch(device, batch_first=False)  # the default
    return summaries_and_dependencies(lstm, x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# With `batch_first=False` (the default for `nn.RNN`, `nn.LSTM` and `nn.GRU`) the input is read
# as `(seq, batch, feature)`. A `(2, 3, 4)` tensor therefore becomes 3 sequences of 2 steps,
# each made of the same time step taken from both of your samples; the recurrence runs across
# your batch. The output has the same layout, so it comes back as `(2, 3, 5)` and indexes like
# the `(batch, seq, hidden)` you wanted. `out[:, -1]` then picks your last *time step* of both
# samples, computed as a 2-step sequence whose first step is sample 0: sample 1's "summary"
# depends on sample 0's data, while sample 0's depends on nothing of sample 1, the signature of
# a recurrence over the wrong axis. Because the shapes agree whenever you only index, no layer
# complains; a length mismatch only surfaces if a later layer needs `seq` or `batch` by size.
#
# ## The fix
# Say how the data is laid out: `nn.LSTM(..., batch_first=True)` for `(batch, seq, feature)`
# (or `x.transpose(0, 1)` before an LSTM that expects time first). Each sample's summary then
# depends on its own input only, and equals what the LSTM gives when that sequence is run
# alone, which is what the check compares with.


# %%
def fixed(device):
    lstm, x = lstm_and_batch(device, batch_first=True)
    return summaries_and_dependencies(lstm, x)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The `nn.LSTM` documentation states the default layout, `(L, N, H_in)` with
# `batch_first=False`, and notes that `batch_first` does not apply to the hidden and cell
# states. The mix-up runs through issue trackers: pytorch/pytorch#1538 ("different result on
# LSTM whether using batch_first"), salesforce/cove#10, where an encoder defined without
# `batch_first=True` was fed batch-first tensors, and Cadene/vqa.pytorch#40. Karpathy's "A
# Recipe for Training Neural Networks" names the general bug (information mixed across the
# batch dimension, e.g. by `view` instead of `transpose`) and the test used here: backpropagate
# from one example's output and make sure only that example's input gets a gradient. The
# default has not changed in any release; the matrix observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# Mixing across the batch is not always this pitfall. A `BatchNorm1d` in training mode after a
# correctly configured LSTM also makes every sample depend on the others, but in both
# directions at once. The symptom asks for the one-way dependency of a recurrence run over the
# batch axis: sample 1's summary depends on sample 0, and sample 0's does not depend on
# sample 1.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The output still has the expected (batch, seq, hidden) shape, sample 1's summary depends
    on sample 0's input, and sample 0's does not depend on sample 1's: a recurrence over the
    batch axis."""
    if run.error is not None:
        return False
    v = run.value
    return (
        v["output_shape"] == (BATCH, SEQ, HIDDEN)
        and v["sample_1_depends_on_sample_0"] > 0
        and v["sample_0_depends_on_sample_1"] == 0
    )


def near_miss(device):
    """The right layout, then a BatchNorm1d in training mode over the summaries: samples
    depend on each other both ways."""
    lstm, x = lstm_and_batch(device, batch_first=True)
    with seeded(1):
        norm = nn.BatchNorm1d(HIDDEN).to(device)
    x = x.clone().requires_grad_(True)
    out, _ = lstm(x)
    last = norm(out[:, -1, :])
    (g10,) = torch.autograd.grad(last[1].sum(), x, retain_graph=True)
    (g01,) = torch.autograd.grad(last[0].sum(), x)
    return {
        "output_shape": tuple(out.shape),
        "last": last.detach(),
        "sample_1_depends_on_sample_0": g10[0].abs().sum().item(),
        "sample_0_depends_on_sample_1": g01[1].abs().sum().item(),
    }


def check(run, device):
    """Each summary equals the LSTM's last step on that sequence run alone (a batch of one),
    and no summary depends on another sample."""
    assert run.error is None, f"raised {run.error!r}"
    lstm, x = lstm_and_batch(device, batch_first=True)
    with torch.no_grad():
        alone = torch.stack([lstm(x[i : i + 1])[0][0, -1] for i in range(BATCH)])
    torch.testing.assert_close(run.value["last"], alone)
    assert run.value["sample_1_depends_on_sample_0"] == 0
    assert run.value["sample_0_depends_on_sample_1"] == 0


CASE = Case(
    id="rnn-batch-first-mismatch",
    title="A batch-first tensor fed to an RNN that expects time first",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Each sequence's LSTM output depends on the other samples of the batch, while the shapes look right.",
    # batch_first has defaulted to False since the RNN modules were written; observed on
    # 2.13.0, no release is known to change the default.
    affects=(Affects("*", reason="batch_first defaults to False; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: torch.nn.LSTM (batch_first, input shape (L, N, H_in))",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.LSTM.html",
        ),
        Source(
            title="pytorch/pytorch#1538: different result on LSTM whether using batch_first",
            url="https://github.com/pytorch/pytorch/issues/1538",
        ),
        Source(
            title="Andrej Karpathy, A Recipe for Training Neural Networks (2019): use backprop to chart dependencies",
            url="https://karpathy.github.io/2019/04/25/recipe/",
        ),
    ),
    tags=("shapes", "rnn", "lstm", "batch_first"),
    references=(
        "https://github.com/salesforce/cove/issues/10",
        "https://github.com/Cadene/vqa.pytorch/issues/40",
        "https://github.com/pytorch/pytorch/issues/19675",  # batch_first does not apply to h_n
    ),
)
