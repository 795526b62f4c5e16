# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.distributed.launch` passes `--local-rank`, and a script that only knows `--local_rank` dies
#
# A training script from the 1.x days is started with `python -m torch.distributed.launch
# --nproc_per_node=N train.py` and reads its GPU from the command line, as the launcher's
# documentation told it to: `parser.add_argument("--local_rank", type=int)`. On 1.13 the
# launcher appends `--local_rank=0`, `--local_rank=1`, ... to each process's arguments and the
# script runs. After the upgrade to 2.0 every process exits at once with `train.py: error:
# unrecognized arguments: --local-rank=0`, and the launcher reports the child as failed: the
# launcher now spells the argument with a dash.

# %%
import inspect
import os
import re
import socket
import subprocess
import sys
import tempfile

from torch_pitfalls import communicate, observe

LAUNCH_TIMEOUT = 90.0  # seconds for the launcher and its one worker (mostly two imports of torch)

# %% [markdown]
# ## The broken code
# The script's argument parsing, as the 1.x launcher documentation showed it. The case writes it
# to a temporary folder and starts it with `python -m torch.distributed.launch
# --nproc_per_node=1 train.py` on the CPU, on a free local port: one worker process, no process
# group and no GPU needed, since the argument dies before any of that.


# %%
def old_train_script():
    import argparse
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--local_rank", type=int, default=0)  # what the 1.x launcher passes
    args = parser.parse_args()
    print(f"local rank {args.local_rank} of LOCAL_RANK {os.environ['LOCAL_RANK']}")


def free_port():
    """A port nobody listens on now: bind port 0, read it, close."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def launch(script):
    """Write `script` (a function) as train.py into a temporary folder and start it the way the
    1.x documentation said, with one process. `--redirects 1 --tee 1` keeps the worker's
    stdout on the console (and in a log folder inside the temporary one); the launcher's
    default, `--redirects 0`, fails on 1.13.1 under Python 3.11, whose flag enums no longer
    list the zero member the launcher looks up. Returns the worker's printed lines; a failed
    launch raises, with the worker's own error line."""
    with tempfile.TemporaryDirectory(prefix="launch-") as tmp:
        with open(os.path.join(tmp, "train.py"), "w") as f:
            f.write(inspect.getsource(script) + f"\n\nif __name__ == '__main__':\n    {script.__name__}()\n")
        cmd = [
            sys.executable,
            "-m",
            "torch.distributed.launch",
            "--nproc_per_node=1",
            "--master_addr=127.0.0.1",
            f"--master_port={free_port()}",
            "--redirects",
            "1",
            "--tee",
            "1",
            "--log_dir",
            os.path.join(tmp, "logs"),
            "train.py",
        ]
        proc = subprocess.Popen(
            cmd,
            cwd=tmp,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=dict(os.environ, OMP_NUM_THREADS="1"),
        )
        out, err = communicate(proc, LAUNCH_TIMEOUT)  # stretched with the machine's load
        done = subprocess.CompletedProcess(cmd, proc.returncode, out, err)
    if done.returncode != 0:
        errors = [line for line in done.stderr.splitlines() if re.search(r"\berror: ", line)]
        raise RuntimeError(
            f"the launch exited with status {done.returncode}: "
            f"{errors[0].strip() if errors else done.stderr.strip()[-200:]}"
        )
    return re.findall(r"local rank \d+ of LOCAL_RANK \d+", done.stdout)


def broken(device):
    return launch(old_train_script)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.distributed.launch` is a thin wrapper over `torch.distributed.run` (torchrun). Unless
# told `--use-env`, it tells each process its local rank on the command line, and 1.x wrote
# `--local_rank=<n>`. For 2.0, pytorch/pytorch#94505 moved the launcher's own options to dashes
# (`--nproc-per-node`, keeping the underscored spellings as aliases) and changed the argument it
# passes to the script to `--local-rank=<n>`. The launcher can accept both spellings of its own
# options, but it can only pass one to the script, and argparse does not treat `-` and `_` as the
# same character: a parser that declares `--local_rank` knows nothing of `--local-rank`, and
# `parse_args()` exits with status 2. The launcher itself prints a `FutureWarning` (on 1.13.1 as
# on 2.13.0) that it is deprecated in favour of torchrun, which passes `LOCAL_RANK` in the
# environment and no argument at all.
#
# ## The fix
# Declare both spellings as one option: `parser.add_argument("--local-rank", "--local_rank",
# type=int, default=0)` (the `dest` is `local_rank` either way), as torch's own documentation of
# `torch.distributed.run` now advises. It works with the 1.13 launcher, the 2.x launcher and
# torchrun. Reading `int(os.environ["LOCAL_RANK"])`, which every launcher sets, is the other
# portable way. The check compares the rank the script parsed with the `LOCAL_RANK` the launcher
# put in its environment: 0, for the one process.


# %%
def new_train_script():
    import argparse
    import os

    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", "--local_rank", type=int, default=0)  # both launchers' spellings
    args = parser.parse_args()
    print(f"local rank {args.local_rank} of LOCAL_RANK {os.environ['LOCAL_RANK']}")


def fixed(device):
    return launch(new_train_script)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#94505 ("[BE] Prefer dash over underscore in command-line options", February
# 2023, in 2.0) added dashed names for torch's command-line options, keeping the underscored
# ones as aliases, and with them changed the argument the launcher passes to `--local-rank`;
# the PR's description does not mention that side of it. The migration note came afterwards:
# pytorch/pytorch#109480, opened in answer to a comment on #94505 and merged in April 2024,
# documents in `torch/distributed/run.py` that "from PyTorch 2.0.0 onwards, the dashed
# `--local-rank` is preferred" and that scripts should accept both spellings. Downstream,
# training scripts whose parsers only knew the old spelling stopped at launch with this error:
# huggingface/pytorch-image-models#1724 ("Pytorch 2.0 breaks distributed training", timm's
# `train.py`), microsoft/LoRA#79 (`gpt2_ft.py`) and XPixelGroup/BasicSR#626; open-mmlab's
# mmaction2 changed its parser in open-mmlab/mmaction2#1558, citing #94505. Observed with this
# project's venvs on CPU: the old script launches and runs on 1.13.1 (its `run.py` appends
# `--local_rank=`); on 2.0.1 (whose `run.py` appends `--local-rank=`, as 2.13.0's does), 2.13.0
# and 2.15.0 the worker dies with the argparse error; the script that declares both spellings runs on all
# four. Each run starts two interpreters and takes about five seconds. The other releases are
# left to the version matrix. Multi-process and GPU launches were not observed.

# %% [markdown]
# ## How the harness checks it
#
# A launch also dies with an argparse error when the script is fine with `--local-rank` but
# lacks something else it requires, here a `--data` path the command line did not give: the same
# status, the same `error:` line from argparse, another argument.

# %% tags=["hide-cell"]
from torch_pitfalls import Case, Source


def symptom(run):
    """The worker's argparse refused the dashed --local-rank the launcher passed."""
    return run.raised(RuntimeError, r"unrecognized arguments: --local-rank=\d")


def script_needing_data():
    import argparse

    parser = argparse.ArgumentParser()
    parser.add_argument("--local-rank", "--local_rank", type=int, default=0)
    parser.add_argument("--data", required=True)
    parser.parse_args()


def near_miss(device):
    return launch(script_needing_data)


def check(run, device):
    """The one worker started, parsed the rank the launcher passed and printed it, and that rank
    is the LOCAL_RANK the launcher set in its environment, 0."""
    assert run.error is None, f"the launch failed: {run.error}"
    assert run.value == ["local rank 0 of LOCAL_RANK 0"], run.value


CASE = Case(
    id="distributed-launch-local-rank",
    title="torch.distributed.launch passes --local-rank, and a script that only knows --local_rank dies",
    kind="error",
    symptom_category="error",
    symptom_line="A script started by torch.distributed.launch dies on --local-rank from torch 2.0.",
    affects=">=2.0",
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        Source(
            title="pytorch/pytorch#94505: [BE] Prefer dash over underscore in command-line options",
            url="https://github.com/pytorch/pytorch/pull/94505",
        ),
        Source(
            title="torch.distributed.run's docstring: 'From PyTorch 2.0.0 onwards, the dashed --local-rank "
            "is preferred' and the advice to accept both spellings",
            url="https://github.com/pytorch/pytorch/blob/main/torch/distributed/run.py",
        ),
    ),
    tags=("upgrade", "distributed", "launch", "argparse"),
    references=(
        "https://github.com/pytorch/pytorch/pull/94505",  # 2.0: the launcher's options and --local-rank get dashes
        "https://github.com/pytorch/pytorch/pull/109480",  # later: migration notes for the --local-rank change
        "https://github.com/huggingface/pytorch-image-models/issues/1724",  # downstream: timm's train.py
        "https://github.com/microsoft/LoRA/issues/79",  # downstream: unrecognized arguments: --local-rank
        "https://github.com/XPixelGroup/BasicSR/issues/626",  # downstream: BasicSR's train.py
        "https://github.com/open-mmlab/mmaction2/pull/1558",  # downstream fix, citing #94505
    ),
    timeout=120.0,
)
