# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # DataParallel: the model must already be on `device_ids[0]`
#
# You wrap the model in `nn.DataParallel` as soon as it is built, adapt it (a new head for your
# classes), send the batch to the GPU and call it. The first forward pass stops with
# `RuntimeError: module must have its parameters and buffers on device cuda:0 (device_ids[0]) but
# found one of them on device: cpu`. The same code ran on a laptop without a GPU, where
# `DataParallel` does nothing but call the model.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded


class Net(nn.Module):
    def __init__(self, classes=3):
        super().__init__()
        self.backbone = nn.Linear(4, 8)
        self.head = nn.Linear(8, classes)

    def forward(self, x):
        return self.head(torch.relu(self.backbone(x)))


X = [[0.5, -1.0, 2.0, 0.0], [1.5, 0.5, -0.5, 1.0], [-2.0, 1.0, 0.0, 0.5], [0.0, 0.0, 1.0, -1.0]]


def weights_and_output(model, out, x):
    """What check needs: the input, the model's weights and its output, all on the CPU."""
    net = model.module if isinstance(model, nn.DataParallel) else model
    return {
        "x": x.cpu(),
        "out": out.detach().cpu(),
        **{name: p.detach().cpu() for name, p in net.named_parameters()},
    }


# %% [markdown]
# ## The broken code
# Wrap first, adapt and move later. Only the batch is sent to the device; the wrapper is
# expected to take care of the model.


# %%
def broken(device):
    with seeded(0):
        model = nn.DataParallel(Net())  # wrapped while still on the CPU
        model.module.head = nn.Linear(8, 2)  # fine-tuning: a head for 2 classes, made on the CPU
    x = torch.tensor(X, device=device)
    out = model(x)  # CUDA: raises
    return weights_and_output(model, out, x)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # no GPU: DataParallel only calls the module, nothing raises

# %% [markdown]
# ## Why
# `DataParallel` does not own a copy of the model per GPU. On every forward pass it takes the
# module as it is, copies (broadcasts) its parameters and buffers from `device_ids[0]` to the
# other GPUs, runs the replicas on slices of the batch, and gathers the outputs. So the module
# has to sit on `device_ids[0]` before each forward pass, and since pytorch/pytorch#17363 the
# forward pass checks that first and names the offending device. With several GPUs, a model
# that was never moved fails on the first call. Two things hide this on smaller machines.
# Without CUDA, `DataParallel` keeps `device_ids = []` and calls the module directly (#3318).
# With exactly one GPU, the constructor moves the module to `device_ids[0]` itself. So on one
# GPU the error appears only for what changed after wrapping, such as the new head above, and
# on two GPUs for the whole model. The source's related warning is about the other half of the
# rule: if the model was sent to, say, `cuda:2`, then `device_ids` must start with 2, or the
# same check fails with `cuda:0 (device_ids[0])` versus `cuda:2`.
#
# ## The fix
# Finish the model, move it to the main device, and only then wrap it, with that device first
# in `device_ids` (`model.to(device)` then `nn.DataParallel(model, device_ids=[main, ...])`).
# Calling `.to(device)` on the wrapper works too, as long as it comes after the last change to
# the model and before the first forward pass.


# %%
def fixed(device):
    with seeded(0):
        net = Net()
        net.head = nn.Linear(8, 2)
    net = net.to(device)  # everything on the main device...
    model = nn.DataParallel(net)  # ...then wrap (device_ids[0] is that device)
    x = torch.tensor(X, device=device)
    out = model(x)
    return weights_and_output(model, out, x)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes' troubleshooting list has two entries on this. The first: `device='cuda'` means
# card 0. To make another card the main one, set the device to that card and move the model
# there with `.to(device)`. The second: with several cards, the first entry of
# `DataParallel`'s `device_ids` should be that main card. The multi-GPU section adds that
# data goes to the first card and the batch is split across the cards.
#
# Upstream, pytorch/pytorch#17065 (February 2019) asked for `DataParallel` to accept a CPU model;
# at the time it failed inside the broadcast with `Broadcast function not implemented for CPU
# tensors`. The request was answered by keeping the rule and checking it: #17363 (fixing the
# regression #17362, where a check at construction had broken `DataParallel(cpu_model).cuda()` in
# the ImageNet example) checks the module's device at each forward pass and raises the message
# above. The documentation of `DataParallel` states the rule ("The parallelized module must have
# its parameters and buffers on device_ids[0] before running this DataParallel module"). Without
# CUDA the wrapper only calls the module (pytorch/pytorch#3318), so the CPU cell of this case is
# `unverified`: broken and fixed compute the same thing there. The behaviour described for several
# GPUs is read from `torch/nn/parallel/data_parallel.py` in 2.13.0, not observed.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: a `RuntimeError` from the same wrapped model that has nothing to do with where
# the weights live: a batch with the wrong number of features (5 instead of 4).

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """DataParallel's own check: a parameter or buffer not on device_ids[0]."""
    return run.raised(RuntimeError, r"module must have its parameters and buffers on device .*device_ids\[0\]")


def near_miss(device):
    with seeded(0):
        model = nn.DataParallel(Net().to(device))
    return model(torch.ones(2, 5, device=device))  # raises: shapes cannot be multiplied


def check(run, device):
    """The output is head(relu(backbone(x))), computed by hand on the CPU from the model's own
    weights, for the 2-class head."""
    v = run.value
    hidden = torch.relu(v["x"] @ v["backbone.weight"].T + v["backbone.bias"])
    expected = hidden @ v["head.weight"].T + v["head.bias"]
    assert expected.shape == (4, 2)
    torch.testing.assert_close(v["out"], expected)


CASE = Case(
    id="dataparallel-to-device-first",
    title="DataParallel: the model must already be on device_ids[0]",
    kind="error",
    symptom_category="error",
    symptom_line="DataParallel raises that the module must have its parameters on cuda:0.",
    # The check at forward, with this message, came with pytorch/pytorch#17363 (February 2019);
    # before it the same mistake failed inside the broadcast, with another message (#17065).
    # Only CUDA shows it: without a GPU DataParallel calls the module directly (#3318).
    affects=(
        Affects(
            ">=1.1",
            since="pytorch/pytorch#17363 (February 2019) added the check in "
            "DataParallel.forward with this message; 1.1.0 is the first release after it",
        ),
    ),
    devices=("cuda",),
    # DataParallel uses a visible GPU even for a batch on the CPU, so on a machine with one the
    # CPU cell runs in a fresh interpreter that sees none: what a machine without CUDA does.
    isolate=("cpu",) if torch.cuda.is_available() else (),
    sources=(
        S1.at(
            "Troubleshooting: with several cards, the first of DataParallel's device_ids "
            "should be the main card, the one the model is sent to with .to(device)"
        ),
    ),
    tags=("devices", "dataparallel", "cuda", "device_ids"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.DataParallel.html",
        "https://github.com/pytorch/pytorch/pull/17363",  # the check at forward and its message
        "https://github.com/pytorch/pytorch/issues/17362",  # why it is checked at forward
        "https://github.com/pytorch/pytorch/issues/17065",  # before: "Broadcast function not implemented for CPU tensors"
        "https://github.com/pytorch/pytorch/pull/3318",  # without CUDA, DataParallel just calls the module
    ),
)
