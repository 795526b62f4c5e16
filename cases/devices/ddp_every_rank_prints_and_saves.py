# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Under torch.distributed every process prints, saves and tests
#
# You move a training script to `DistributedDataParallel` and start it on two GPUs. Every log
# line now comes twice, `checkpoint.pt` is written by two processes at the same moment, and the
# test loop reports two accuracies, each on half of the test set, neither of which is the
# number you wanted. Nothing fails: the script is simply run once per process, top to bottom.

# %%
import inspect
import logging
import os
import re
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
SCRIPT_TIMEOUT = 60.0  # seconds for a run on a quiet machine (a few, mostly importing torch); stretched with the load


def make_data():
    """32 training and 16 test samples of a linearly separable toy problem (local generator)."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(48, 4, generator=g)
    y = (x[:, 0] + x[:, 1] > 0).long()
    ds = torch.utils.data.TensorDataset
    return ds(x[:32], y[:32]), ds(x[32:], y[32:])


def evaluate(model, loader):
    """Correct predictions and the number of samples seen."""
    correct = total = 0
    with torch.no_grad():
        for xb, yb in loader:
            correct += int((model(xb).argmax(1) == yb).sum())
            total += len(yb)
    return correct, total


# %% [markdown]
# ## The broken code
# A single-process training script moved to DDP the usual way: a process group, the model
# wrapped in `DistributedDataParallel`, a `DistributedSampler` for each loader, and the rest
# as before. It runs once per rank, as `torchrun --nproc_per_node 2 train.py` or `mp.spawn`
# runs it: here `train.py` starts its ranks with `torch.multiprocessing.start_processes` (what
# `mp.spawn` calls) by forking, so torch is imported once, and each rank finds `RANK`,
# `WORLD_SIZE`, `MASTER_ADDR` and `MASTER_PORT` (a free port) in its environment, which
# `init_process_group` reads. It runs on the CPU with the gloo backend; on GPUs only the backend
# and the device change.

# %%
HEADER = (
    f"""
import os
import torch, torch.distributed as dist, torch.multiprocessing as mp
from torch import nn
from torch.nn.parallel import DistributedDataParallel as DDP
from torch.utils.data import DataLoader
from torch.utils.data.distributed import DistributedSampler

WORLD, EPOCHS = {WORLD}, {EPOCHS}
"""
    + inspect.getsource(make_data)
    + "\n"
    + inspect.getsource(evaluate)
)

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
        torch.manual_seed(0)
        model = DDP(nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        train, test = make_data()
        loader = DataLoader(train, batch_size=8, sampler=DistributedSampler(train, WORLD, rank, shuffle=False))
        for epoch in range(EPOCHS):
            for xb, yb in loader:
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
            print(f"epoch {epoch}: loss {loss.item():.4f}")
        torch.save(model.module.state_dict(), "checkpoint.pt")
        print("saved checkpoint.pt")
        test_loader = DataLoader(test, batch_size=8, sampler=DistributedSampler(test, WORLD, rank, shuffle=False))
        correct, total = evaluate(model.module, test_loader)
        print(f"test accuracy {correct}/{total}")
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
    rank, told the rendezvous (WORLD_SIZE, MASTER_ADDR, MASTER_PORT) through the environment this
    process gives it (never its own). Returns what the ranks printed and the checkpoint left
    behind (or None). Every file goes with the folder; on a timeout every rank is killed."""
    with tempfile.TemporaryDirectory(prefix="ddp-") as tmp:
        path = os.path.join(tmp, "train.py")
        with open(path, "w") as f:
            f.write(HEADER + main_source + LAUNCH)
        env = dict(os.environ, WORLD_SIZE=str(WORLD), MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()))
        env["OMP_NUM_THREADS"] = "1"
        # Buffered, each rank's lines leave in one piece when it exits; unbuffered, the two ranks'
        # words interleave mid-line on the shared pipe, as on a shared terminal.
        env.pop("PYTHONUNBUFFERED", None)
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
            out, err = communicate(proc, SCRIPT_TIMEOUT)
        except BaseException:  # a timeout, or the harness's own time limit
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            raise
        ckpt_path = os.path.join(tmp, "checkpoint.pt")
        checkpoint = torch.load(ckpt_path, weights_only=True) if os.path.exists(ckpt_path) else None
    if proc.returncode != 0:
        last = [line for line in err.strip().splitlines() if line.strip()][-1:] or [""]
        raise RuntimeError(f"train.py exited with status {proc.returncode}: {last[0][:200]}")
    return [out], checkpoint


def summarize(world, outputs, checkpoint=None):
    """What the ranks printed, counted by kind over all of them."""
    lines = [line for output in outputs for line in output.splitlines()]
    tests = sorted(
        tuple(map(int, m.groups())) for m in (re.fullmatch(r"test accuracy (\d+)/(\d+)", line) for line in lines) if m
    )
    return {
        "world size": world,
        "epoch lines": sum(bool(re.match(r"epoch \d+: loss", line)) for line in lines),
        "saves": sum(line == "saved checkpoint.pt" for line in lines),
        "test results": tests,  # (correct, samples) per printed result
        "checkpoint": checkpoint,
    }


def broken(device):
    out, checkpoint = run_script(BROKEN_MAIN)
    return summarize(WORLD, out)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.distributed` is SPMD: single program, multiple data. `mp.spawn`, `torchrun` and the
# old `torch.distributed.launch` each start the *same* script once per process (usually one per
# GPU) and tell each its rank. DDP only keeps the model replicas in step: when it wraps the
# model it broadcasts rank 0's parameters and buffers to every process; at the start of each
# forward it broadcasts rank 0's buffers again (BatchNorm's running statistics, say: the default
# `broadcast_buffers=True`, an option that 2.13 deprecates in favour of `forward_sync_buffers`,
# also on by default); and inside `backward()` it averages the gradients across processes.
# `DistributedSampler` only changes which samples a process sees. Everything else in the script
# runs in every process: each `print`, each `torch.save` to the same path (two writers
# truncating and filling one file at the same time), each evaluation. A `DistributedSampler` on
# the test set makes it worse: each process scores its own share, so the printed accuracies are
# on 8 of the 16 test samples each.
#
# ## The fix
# Do the side effects on one process. Print, save and evaluate only where `dist.get_rank() == 0`
# (or the `rank` that `mp.spawn` passes, or the `RANK` that `torchrun` sets), with a plain, undistributed test loader over the whole
# test set there. Then `dist.barrier()` so the other processes do not go on (or tear the group
# down) while rank 0 is still writing. The DDP tutorial does the same for its checkpoint. The
# model is identical on every process after each step, so rank 0's copy is the model.

# %%
FIXED_MAIN = """
def main():
    dist.init_process_group("gloo")  # rank, world size and rendezvous from the environment
    rank = dist.get_rank()
    try:
        torch.manual_seed(0)
        model = DDP(nn.Linear(4, 2))
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        train, test = make_data()
        loader = DataLoader(train, batch_size=8, sampler=DistributedSampler(train, WORLD, rank, shuffle=False))
        for epoch in range(EPOCHS):
            for xb, yb in loader:
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
            if rank == 0:
                print(f"epoch {epoch}: loss {loss.item():.4f}")
        if rank == 0:
            torch.save(model.module.state_dict(), "checkpoint.pt")
            print("saved checkpoint.pt")
            correct, total = evaluate(model.module, DataLoader(test, batch_size=8))  # all of it
            print(f"test accuracy {correct}/{total}")
        dist.barrier()  # the others wait until rank 0 has saved and tested
    finally:
        dist.destroy_process_group()
"""


def fixed(device):
    out, checkpoint = run_script(FIXED_MAIN)
    return summarize(WORLD, out, checkpoint)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes' section on distributed training launches with `python -m torch.distributed.launch
# --nproc_per_node 8 main.py`, which passes each process its `--local-rank`. Among the things to
# adapt, the notes list that the test loader should not be distributed, or several test results
# come out, and that printing and saving should happen on process 0 only, or the console gets
# several copies. The DDP tutorial's checkpoint section saves on one process and makes the others
# wait with a barrier before they load. This case starts one process per rank, as `mp.spawn`
# does (forked, so torch is imported once), with the gloo backend on the CPU, so that no GPU is
# needed. The behaviour is the programming model, not a release's quirk, so `affects` has no
# bounds.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: a single-process script whose logger got the same handler twice (a classic
# when a setup function runs twice). Every line appears twice too, but there is one process,
# and its one test result covers the whole test set. That is a logging bug, not this one.

# %% tags=["hide-cell"]
from torch_pitfalls import Case, seeded
from torch_pitfalls.sources import S1


def stable(value):
    """The counts and test sizes; the losses and the checkpoint bytes are not part of it."""
    counts = {k: value[k] for k in ("world size", "epoch lines", "saves")}
    return {**counts, "test sizes": [total for _, total in value["test results"]]}


def symptom(run):
    """Every one of the `world size` processes logged every epoch, saved, and printed a test
    result on its own 1/world-size share of the test set."""
    if run.error is not None or not isinstance(run.value, dict):
        return False
    v = run.value
    world = v["world size"]
    _, test = make_data()
    return (
        world > 1
        and v["epoch lines"] == world * EPOCHS
        and v["saves"] == world
        and len(v["test results"]) == world
        and all(total == len(test) // world for _, total in v["test results"])
    )


def near_miss(device):
    lines = []

    def to_lines():
        handler = logging.Handler()
        handler.emit = lambda record: lines.append(record.getMessage())
        return handler

    log = logging.Logger("train")  # a private logger: nothing registered globally
    log.addHandler(to_lines())
    log.addHandler(to_lines())  # set up a second time: now every record goes out twice
    train, test = make_data()
    with seeded(0):  # the model's init and the loaders' base seeds draw from the global RNG
        model = nn.Linear(4, 2)
        opt = torch.optim.SGD(model.parameters(), lr=0.5)
        for epoch in range(EPOCHS):
            for xb, yb in torch.utils.data.DataLoader(train, batch_size=8):
                opt.zero_grad()
                loss = nn.functional.cross_entropy(model(xb), yb)
                loss.backward()
                opt.step()
            log.warning(f"epoch {epoch}: loss {loss.item():.4f}")
        log.warning("saved checkpoint.pt")
        correct, total = evaluate(model, torch.utils.data.DataLoader(test, batch_size=8))
    log.warning(f"test accuracy {correct}/{total}")
    return summarize(1, ["\n".join(lines)])


def check(run, device):
    """One line per epoch, one save, one test result, and that result is the one a plain
    evaluation of the saved weights on the whole test set gives (computed here, by hand)."""
    v = run.value
    assert (v["epoch lines"], v["saves"], len(v["test results"])) == (EPOCHS, 1, 1), v
    _, test = make_data()
    x, y = test.tensors
    state = v["checkpoint"]
    predicted = (x @ state["weight"].T + state["bias"]).argmax(1)
    assert v["test results"] == [(int((predicted == y).sum()), len(y))], v["test results"]


CASE = Case(
    id="ddp-every-rank-prints-and-saves",
    title="Under torch.distributed every process prints, saves and tests",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Under DistributedDataParallel every log line comes twice and each rank tests half the data.",
    # SPMD execution is what torch.distributed is: each process runs the whole script. No
    # release is known to behave otherwise, so no bound. Observed on 2.13.0 with gloo on the CPU.
    affects="*",
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        S1.at(
            "Distributed Training: the test loader must not be distributed or several "
            "test results come out; printing and saving only on process 0"
        ),
    ),
    tags=("devices", "distributed", "ddp", "rank", "checkpoint"),
    references=(
        "https://docs.pytorch.org/tutorials/intermediate/ddp_tutorial.html",  # save on one process, barrier
        "https://docs.pytorch.org/docs/stable/data.html#torch.utils.data.distributed.DistributedSampler",
        "https://docs.pytorch.org/docs/stable/distributed.html#torch.distributed.barrier",
    ),
    timeout=90.0,
)
