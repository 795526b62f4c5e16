# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A process group and a sampler, but no DistributedDataParallel
#
# You turn a training script into a two-process one: `init_process_group` at the top, a
# `DistributedSampler` so that each process reads its own half of the data, one process per
# GPU. The model itself stays a plain `nn.Module`. Both processes train and nothing fails. But
# nothing ties the two processes together: each one trains its own copy of the model on its own
# half of the data, the copies drift apart, and the checkpoint that rank 0 writes is a model
# that has seen half of the training set.

# %%
import inspect
import os
import signal
import socket
import subprocess
import sys
import tempfile

import torch
from torch import nn

from torch_pitfalls import communicate, observe

WORLD = 2  # processes, as `torchrun --nproc_per_node 2` or mp.spawn(nprocs=2) would start
EPOCHS = 2
BATCH = 8  # per process
LR = 0.5
SCRIPT_TIMEOUT = 60.0  # seconds for a run on a quiet machine (a few, mostly importing torch); stretched with the load


def make_data():
    """32 training samples of a linearly separable toy problem (local generator)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(32, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    return torch.utils.data.TensorDataset(x, y)


# %% [markdown]
# ## The broken code
# The script as a first attempt at data parallelism writes it: a process group, a
# `DistributedSampler` that hands each rank its share of the samples, and the training loop of
# the single-process script, with the model as it was. Rank 0 saves the checkpoint, as it
# should. To let us look inside both processes, each rank also dumps its own weights to a file
# of its own.
#
# As in `ddp-every-rank-prints-and-saves`, `train.py` starts one process per rank with
# `torch.multiprocessing.start_processes` (what `mp.spawn` calls), by forking, and each rank
# finds `RANK`, `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` (a free port) in its environment.
# It runs on the CPU with the gloo backend; on GPUs only the backend and the device change.

# %%
HEADER = f"""
import os
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

WORLD, EPOCHS, BATCH, LR = {WORLD}, {EPOCHS}, {BATCH}, {LR}
""" + inspect.getsource(make_data)

LAUNCH = """
def rank_main(rank):
    os.environ["RANK"] = os.environ["LOCAL_RANK"] = str(rank)
    main()


if __name__ == "__main__":
    mp.start_processes(rank_main, nprocs=WORLD, start_method="fork")  # one process per rank
"""

BROKEN_MAIN = """
def main():
    dist.init_process_group("gloo")  # rank, world size and rendezvous from the environment
    rank = dist.get_rank()
    try:
        torch.manual_seed(0)  # the same initial weights on every rank
        model = nn.Linear(4, 2)  # a plain module: never wrapped in DDP
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        train = make_data()
        loader = DataLoader(train, batch_size=BATCH, sampler=DistributedSampler(train, WORLD, rank, shuffle=False))
        for epoch in range(EPOCHS):
            for xb, yb in loader:
                opt.zero_grad()
                nn.functional.cross_entropy(model(xb), yb).backward()
                opt.step()
        torch.save(model.state_dict(), f"weights-rank{rank}.pt")  # to look inside each process
        if rank == 0:
            torch.save(model.state_dict(), "checkpoint.pt")
        dist.barrier()  # the others wait until rank 0 has saved
    finally:
        dist.destroy_process_group()
"""


def free_port():
    """A port nobody listens on now, found as launchers find one: bind port 0, read, close."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def run_script(main_source):
    """Write train.py into a temporary folder and run it: it starts WORLD processes, one per
    rank, told the rendezvous through the environment this process gives it (never its own).
    Returns each rank's weights and the checkpoint, read back before the folder goes. On a
    timeout every rank is killed."""
    with tempfile.TemporaryDirectory(prefix="ddp-") as tmp:
        path = os.path.join(tmp, "train.py")
        with open(path, "w") as f:
            f.write(HEADER + main_source + LAUNCH)
        env = dict(os.environ, WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        env["OMP_NUM_THREADS"] = "1"
        # its own process group, so that a timeout kills the ranks it forked too
        proc = subprocess.Popen(
            [sys.executable, path],
            cwd=tmp,
            env=env,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        try:
            _, err = communicate(proc, SCRIPT_TIMEOUT)
        except BaseException:  # a timeout, or the harness's own time limit
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        if proc.returncode != 0:
            last = [line for line in err.strip().splitlines() if line.strip()][-1:] or [""]
            raise RuntimeError(f"train.py exited with status {proc.returncode}: {last[0][:200]}")

        def load(name):
            return torch.load(os.path.join(tmp, name), weights_only=True)

        ranks = [load(f"weights-rank{rank}.pt") for rank in range(WORLD)]
        checkpoint = load("checkpoint.pt")
    return ranks, checkpoint


def summarize(ranks, checkpoint):
    """Each rank's weights, the checkpoint, and the largest gap between two ranks' weights."""
    gap = max(float((ranks[0][name] - other[name]).abs().max()) for other in ranks[1:] for name in ranks[0])
    return {"world size": len(ranks), "gap between ranks": gap, "checkpoint": checkpoint, "ranks": ranks}


def broken(device):
    return summarize(*run_script(BROKEN_MAIN))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# The two ranks started from the same weights (the same seed) and ended with different ones,
# and the checkpoint is rank 0's copy.
#
# ## Why
# `init_process_group` only opens a channel between the processes; nothing goes through it
# unless some code sends something. `DistributedSampler` only picks which samples this rank
# reads. The code that sends is `DistributedDataParallel`: when it wraps the model it
# broadcasts rank 0's parameters to every rank, and during `backward()` it averages every
# gradient over the ranks (an all-reduce, bucket by bucket, from hooks on the parameters), so
# that each rank's optimizer takes the same step from the same weights. Without the wrapper each
# rank computes the gradient of its own half of the batch and steps on it alone. That is two
# independent trainings on two disjoint halves of the data, each with half the samples per
# step, and only rank 0's result is kept.
#
# The same happens when the wrapper exists but the loop calls around it: `ddp = DDP(model)`
# followed by `model(xb)`, or `ddp.module(xb)`. The wrapper's own `forward` is what arms its
# gradient hooks for the next backward; after a forward that went around it, the hooks find
# nothing to do and each rank steps on its own gradient. A script that sometimes calls the
# wrapper and sometimes the bare module lets the ranks drift on exactly those steps.
#
# ## The fix
# Wrap the model in `DistributedDataParallel` once, right after building it (and moving it to
# the rank's device), and run every forward through the wrapper. Then all ranks hold the same
# weights after each step, equal to those of one process stepping on the union of the ranks'
# batches, and rank 0's checkpoint is the model that saw all the data. Save
# `model.module.state_dict()` so that the names carry no `module.` prefix.

# %%
FIXED_MAIN = """
def main():
    dist.init_process_group("gloo")  # rank, world size and rendezvous from the environment
    rank = dist.get_rank()
    try:
        torch.manual_seed(0)
        model = DDP(nn.Linear(4, 2))  # gradients are averaged over the ranks in backward()
        opt = torch.optim.SGD(model.parameters(), lr=LR)
        train = make_data()
        loader = DataLoader(train, batch_size=BATCH, sampler=DistributedSampler(train, WORLD, rank, shuffle=False))
        for epoch in range(EPOCHS):
            for xb, yb in loader:
                opt.zero_grad()
                nn.functional.cross_entropy(model(xb), yb).backward()
                opt.step()
        torch.save(model.module.state_dict(), f"weights-rank{rank}.pt")  # to look inside each process
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
        dist.barrier()  # the others wait until rank 0 has saved
    finally:
        dist.destroy_process_group()
"""


def fixed(device):
    return summarize(*run_script(FIXED_MAIN))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# TrainCheck's evaluation workloads include "x-jxmnop-ddp-out-of-sync", on the inconsistent
# wrapping of a model in `DistributedDataParallel`: a Hugging Face `Trainer` subclass whose
# training step uses the DDP wrapper on some steps and the bare module on the others, so the
# gradients are not synchronised on those steps and the replicas go out of step without an
# error (the workload credits a post by jxmnop as the original report). guardtower's catalogue
# names the plainer form as its rule DDP-003, a process group initialised while the model is
# never wrapped. The DDP tutorial and the DDP notes describe the mechanism the fix relies on:
# the broadcast of the initial state in the constructor and the all-reduce of gradients in
# backward, from autograd hooks registered on the parameters. This case runs two ranks on the
# CPU with the gloo backend, forked as `mp.spawn` does. It is the programming model of
# `torch.distributed`, not a release's quirk, so `affects` has no bounds.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike that names the unwrapped module and is right: the model wrapped in DDP, the
# forward run through the wrapper, but the optimizer built from `model.module.parameters()`.
# Those are the very `Parameter` objects the wrapper holds, so the averaged gradients land on
# them and the ranks stay identical: the symptom, which asks for each rank to hold the model
# trained on its own shard alone, refuses it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source, seeded

NEAR_MISS_MAIN = FIXED_MAIN.replace(
    "opt = torch.optim.SGD(model.parameters(), lr=LR)",
    "opt = torch.optim.SGD(model.module.parameters(), lr=LR)  # the same tensors the wrapper holds",
)


def batches_of(indices):
    """The batches a loader over these sample indices yields, in order, for all the epochs."""
    x, y = make_data().tensors
    return [
        (x[indices[i : i + BATCH]], y[indices[i : i + BATCH]])
        for _ in range(EPOCHS)
        for i in range(0, len(indices), BATCH)
    ]


def shard(rank):
    """The samples DistributedSampler(shuffle=False) gives a rank: every WORLD-th, from `rank`."""
    return list(range(rank, len(make_data()), WORLD))


def train_by_hand(steps):
    """One process, plain gradient descent on the mean cross-entropy of each step's samples,
    the softmax gradient written out; the initial weights are nn.Linear(4, 2)'s after seed 0."""
    with seeded(0):
        init = nn.Linear(4, 2)
    w, b = init.weight.detach().clone(), init.bias.detach().clone()
    for x, y in steps:
        grad_logits = torch.softmax(x @ w.T + b, dim=1)
        grad_logits[torch.arange(len(y)), y] -= 1
        grad_logits /= len(y)
        w, b = w - LR * grad_logits.T @ x, b - LR * grad_logits.sum(0)
    return {"weight": w, "bias": b}


def same(state, expected):
    return all(torch.allclose(state[name], expected[name], rtol=1e-4, atol=1e-5) for name in expected)


def symptom(run):
    """The ranks ended with different weights, each equal to a model trained alone on that rank's
    shard, and the checkpoint is rank 0's: no gradient ever crossed between the ranks."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    v = run.value
    alone = [train_by_hand(batches_of(shard(rank))) for rank in range(v["world size"])]
    return (
        v["world size"] > 1
        and v["gap between ranks"] > 1e-3
        and all(same(state, expected) for state, expected in zip(v["ranks"], alone))
        and same(v["checkpoint"], alone[0])
    )


def near_miss(device):
    return summarize(*run_script(NEAR_MISS_MAIN))


def check(run, device):
    """Every rank and the checkpoint hold the weights of one process that steps, at each step,
    on the union of the ranks' batches (the average of their mean losses), trained by hand."""
    v = run.value
    steps = zip(*(batches_of(shard(rank)) for rank in range(WORLD)))
    union = [(torch.cat([x for x, _ in step]), torch.cat([y for _, y in step])) for step in steps]
    expected = train_by_hand(union)
    for state in [*v["ranks"], v["checkpoint"]]:
        for name in expected:
            torch.testing.assert_close(state[name], expected[name], rtol=1e-4, atol=1e-5)


def stable(value):
    """Whether the ranks agree and the checkpoint is rank 0's; the trained floats move in their
    last digits between releases."""
    return {
        "world size": value["world size"],
        "ranks agree": value["gap between ranks"] < 1e-6,
        "checkpoint is rank 0's": same(value["checkpoint"], value["ranks"][0]),
    }


CASE = Case(
    id="ddp-model-not-wrapped",
    title="A process group and a sampler, but no DistributedDataParallel",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Each rank trains its own copy on its own shard; the saved model has seen half the data.",
    star=False,
    # Without the wrapper no gradient is exchanged; that is how torch.distributed has worked
    # since DDP exists. Observed on 2.13.0 with gloo on the CPU.
    affects=(Affects("*", reason="gradients are exchanged only by DDP's hooks; no release syncs a bare module"),),
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        Source(
            title="TrainCheck evaluation workloads: x-jxmnop-ddp-out-of-sync, "
            "inconsistent wrapping of the model in DistributedDataParallel",
            url="https://github.com/OrderLab/TrainCheck-Evaluation-Workloads/tree/main/silent-issue-detection/"
            "bug-reprod-scripts/x-jxmnop-ddp-out-of-sync",
        ),
        Source(
            title="guardtower: rule DDP-003, process group initialized but model not wrapped",
            url="https://pypi.org/project/guardtower/",
        ),
    ),
    tags=("devices", "distributed", "ddp", "rank", "checkpoint"),
    references=(
        "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html",
        "https://docs.pytorch.org/docs/stable/notes/ddp.html",  # broadcast in the constructor, all-reduce in backward
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.parallel.DistributedDataParallel.html",
    ),
    timeout=90.0,
)
