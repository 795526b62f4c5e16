# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A local file named like a module shadows it
#
# You save a quick experiment as `torch.py` (or a debugging helper as `pdb.py`) in your project
# folder. From then on, a script started in that folder fails at its imports with
# `ModuleNotFoundError: No module named 'torch.nn'; 'torch' is not a package`, or with
# `AttributeError: module 'pdb' has no attribute 'set_trace'`, although torch is installed and
# worked an hour ago in another folder.

# %%
import json
import tempfile
from pathlib import Path

import torch

from torch_pitfalls import observe, run_python

# %% [markdown]
# ## The broken code
# A fresh interpreter (the case never touches the test process's imports) is started in a
# temporary folder holding a user's own `torch.py`, and imports `torch.nn` as any training
# script does. The child reports what it saw as JSON: the exception, and which file `torch` is
# (a file inside the temporary folder is named relative to it, `./torch.py`, so no random
# folder name ends up in what the case returns).

# %%
PROBE = """
import json, sys
try:
    import {module}
    error, missing = None, None
except ImportError as exc:
    error, missing = type(exc).__name__, exc.name
torch_module = sys.modules.get("torch")
print(json.dumps({{"error": error, "missing": missing,
                  "torch_file": getattr(torch_module, "__file__", None),
                  "has_nn_linear": hasattr(getattr(torch_module, "nn", None), "Linear")}}))
"""


def _probe_in_folder_with(file_name, device, module="torch.nn"):
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, file_name).write_text("# a quick experiment\nx = 1\n")
        child = run_python(PROBE.format(module=module), cwd=folder)
        if child.returncode != 0:
            raise RuntimeError(f"probe failed: {child.stderr.strip()}")
        report = json.loads(child.stdout)
        if report["torch_file"] is not None:
            found, here = Path(report["torch_file"]).resolve(), Path(folder).resolve()
            if found.is_relative_to(here):
                report["torch_file"] = "./" + found.relative_to(here).as_posix()
        return report


def broken(device):
    # `device` plays no part: the import fails before any tensor exists.
    return _probe_in_folder_with("torch.py", device)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `import torch` takes the first match along `sys.path`, and the first entry is the folder of
# the script being run (or the current folder, for `python -c`, a REPL or a notebook kernel),
# ahead of site-packages. A `torch.py` there *is* `torch` for that process. It is a plain
# module, not a package, so `torch.nn` cannot exist below it: "'torch' is not a package".
# With a shadowed standard-library module the failure moves: `pdb.py` imports fine and then
# lacks `set_trace` (an `AttributeError`), and a shadowed module that torch itself imports
# can break `import torch` from deep inside torch's own files. A stale `__pycache__/torch.*.pyc`
# left after deleting the file is not used without its source; the file itself must go.
# Python 3.13 added a hint to such errors naming the shadowing file; the 3.11 used here has none.
#
# ## The fix
# Rename the local file to something no package uses (`torch_playground.py`) and start again.


# %%
def fixed(device):
    return _probe_in_folder_with("torch_playground.py", device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's troubleshooting list says that a baffling "No module named XXX" should make you check
# whether one of your own files has the name of a library module, with `pdb.py` as its example.
# It is Python behaviour and shows with every torch, so `affects` has no version bound.
# CPython's issue #67997 asked for a warning when a module in a traceback shadows a
# standard-library one; Python 3.13 now prints such a hint (gh-95754, "Better error when
# script shadows a standard library or third party module"; also noted on the page of ruff's
# rule A005, which flags first-party modules named like standard-library ones). On older
# Pythons a linter or a unique file name is the guard. Only the CPU run was observed by this project; nothing here
# depends on the device.

# %% [markdown]
# ## How the harness checks it
#
# Not every `ModuleNotFoundError` under `torch` is a shadowed torch. Mixing up the
# `tensorboardX` package with `torch.utils.tensorboard` and writing
# `import torch.utils.tensorboardX` fails the same way, with the real torch imported: a typo,
# not this pitfall, and the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """`import torch.nn` failed with ModuleNotFoundError because `torch` was the local file."""
    if run.error is not None:
        return False
    seen = run.value
    return (
        seen["error"] == "ModuleNotFoundError" and seen["missing"] == "torch.nn" and seen["torch_file"] == "./torch.py"
    )


def near_miss(device):
    return _probe_in_folder_with("torch_playground.py", device, module="torch.utils.tensorboardX")


def check(run, device):
    """The import worked and found `nn.Linear`, and the child's `torch` is the file this process
    imported itself (`torch.__file__`, found here, not by the child)."""
    seen = run.value
    assert seen["error"] is None and seen["has_nn_linear"], seen
    assert Path(seen["torch_file"]).resolve() == Path(torch.__file__).resolve(), seen


CASE = Case(
    id="module-name-shadowing",
    title="A local file named like a module shadows it",
    kind="error",
    symptom_category="error",
    symptom_line="Imports fail with No module named torch.nn; torch is not a package: a local torch.py.",
    # Python's import order, not torch's code: it shows with every torch version.
    affects=(Affects(reason="Python's module search order; the same with every torch"),),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            "troubleshooting list: an unexplained 'No module named XXX' can be a file "
            "named like a library module, e.g. pdb.py"
        ),
    ),
    tags=("python", "imports"),
    references=(
        "https://github.com/python/cpython/issues/67997",  # ask: warn when a module shadows stdlib
        "https://docs.astral.sh/ruff/rules/stdlib-module-shadowing/",  # lint rule A005
    ),
)
