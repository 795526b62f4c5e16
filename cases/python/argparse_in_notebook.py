# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `parse_args()` in a notebook reads the kernel's arguments
#
# You paste a training script into a Jupyter cell. The cell prints
# `usage: ipykernel_launcher.py [-h] [--lr LR] ...` and
# `error: unrecognized arguments: -f /…/kernel-….json`, then `SystemExit: 2`. Wrapping the call in
# `try: ... except Exception:` does not catch it.

# %%
import json

from torch_pitfalls import observe, run_python

# %% [markdown]
# ## The broken code
# A Jupyter kernel is a Python process started as `python -m ipykernel_launcher -f <connection
# file>`, and that is its `sys.argv`. A fresh interpreter (the test process's `sys.argv` is left
# alone) takes the same argv, defines a parser the way training scripts do and calls
# `parse_args()` inside `except Exception`, as a cautious notebook user would. It reports as
# JSON what got out.

# %%
KERNEL_ARGV = [
    "/usr/lib/python3/site-packages/ipykernel_launcher.py",
    "-f",
    "/home/user/.local/share/jupyter/runtime/kernel-1234.json",
]

SESSION = """
import argparse, json, sys
sys.argv = {argv!r}
parser = argparse.ArgumentParser()
parser.add_argument("--lr", type=float, default=0.1)
parser.add_argument("--epochs", type=int, default=10)
{more_arguments}
seen = {{"caught_by_except_exception": False}}
try:
    try:
        args = parser.{call}
        seen.update(error=None, args=vars(args))
    except Exception:
        seen["caught_by_except_exception"] = True
        raise
except SystemExit as exc:
    seen.update(error="SystemExit", code=exc.code, is_exception=isinstance(exc, Exception))
print(json.dumps(seen))
"""


def _in_kernel(call, argv=KERNEL_ARGV, more_arguments=""):
    child = run_python(SESSION.format(call=call, argv=argv, more_arguments=more_arguments))
    if child.returncode != 0:
        raise RuntimeError(f"session failed: {child.stderr.strip()}")
    seen = json.loads(child.stdout)
    seen["stderr"] = child.stderr
    return seen


def broken(device):
    # `device` plays no part: argparse stops the cell before any tensor exists.
    return _in_kernel("parse_args()")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `parse_args()` with no argument parses `sys.argv[1:]`. In a terminal that is what you typed;
# in a notebook it is the kernel's own command line, `-f <connection file>`, which your parser
# does not know. On any parsing error argparse prints the usage and the message to stderr and
# calls `sys.exit(2)`. `SystemExit` derives from `BaseException`, not from `Exception`, so an
# `except Exception` lets it through; IPython catches it at the cell boundary and shows
# `SystemExit: 2` instead of ending the kernel.
#
# ## The fix
# Pass the argument list yourself: `parser.parse_args(args=[])` parses an empty command line and
# returns the defaults. (The source notes the price: `--help` and real command-line values are
# ignored then; `parse_known_args()` is the alternative that keeps them and returns the rest.)


# %%
def fixed(device):
    seen = _in_kernel("parse_args(args=[])")
    return {"error": seen["error"], "args": seen.get("args")}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's troubleshooting list says Jupyter notebooks and argparse do not get along, and that
# changing `parser.parse_args()` to `parser.parse_args(args=[])` is enough, at the cost of
# `--help` no longer working. pytorch/examples#369 is the same report for the MNIST example run
# in a notebook, with the same fix suggested. Python's argparse documentation now states the
# behaviour (python/cpython#125275: on an invalid argument list, `parse_args` prints a message
# to stderr and exits with status 2). `exit_on_error=False` (Python 3.9) is not a fix here: on
# the Python 3.11 used here, unrecognized arguments still end in `parser.error()` and exit. It is
# argparse behaviour, shown with every torch, so `affects` has no version bound. Only the CPU
# run was observed by this project; nothing here depends on the device.

# %% [markdown]
# ## How the harness checks it
#
# Not every `SystemExit: 2` from argparse is the kernel's argv. A script run from a terminal
# without a required option (`python train.py`, `--data` forgotten) ends the same way, past
# `except Exception`, but the complaint is about a missing argument of its own: a real usage
# error, which `parse_args(args=[])` would not fix. The symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """SystemExit with code 2 that `except Exception` did not catch, after rejecting `-f`."""
    if run.error is not None:
        return False
    seen = run.value
    return (
        seen.get("error") == "SystemExit"
        and seen.get("code") == 2
        and seen.get("is_exception") is False
        and seen.get("caught_by_except_exception") is False
        and "unrecognized arguments: -f" in seen.get("stderr", "")
    )


def near_miss(device):
    return _in_kernel("parse_args()", argv=["train.py"], more_arguments='parser.add_argument("--data", required=True)')


def check(run, device):
    """The child parsed without exiting, and its arguments are the defaults declared in the
    parser, written out by hand: nothing was taken from the kernel's argv."""
    assert run.value["error"] is None, run.value
    assert run.value["args"] == {"lr": 0.1, "epochs": 10}, run.value


CASE = Case(
    id="argparse-in-notebook",
    title="`parse_args()` in a notebook reads the kernel's arguments",
    kind="error",
    symptom_category="error",
    symptom_line="parse_args() in a notebook cell exits with unrecognized arguments: -f …kernel.json.",
    # argparse and the Jupyter kernel's command line, not torch: the same with every torch.
    affects=(Affects(reason="argparse reading the kernel's argv; the same with every torch"),),
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(S1.at("troubleshooting list: Jupyter and argparse do not match; use parser.parse_args(args=[])"),),
    tags=("python", "argparse", "notebook"),
    references=(
        "https://github.com/pytorch/examples/issues/369",  # the MNIST example in a notebook
        "https://github.com/python/cpython/pull/125275",  # docs: message to stderr, exit status 2
    ),
)
