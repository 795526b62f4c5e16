# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.save(model)` stores a reference to the class, not the class
#
# At the end of training you save the whole model with `torch.save(model, "model.pt")`: one
# line, and `torch.load` gives the model back ready to use. Weeks later someone renames the
# model class during a refactor (or moves it to another file, or loads the file from a script
# that never imports it), and the checkpoint no longer opens:
# `AttributeError: Can't get attribute 'Net' on <module 'models' ...>`. The weights are all in
# the file, but `torch.load` cannot rebuild the object that holds them.

# %%
import json
import tempfile
from pathlib import Path

import torch
from torch import nn

from torch_pitfalls import observe, run_python, seeded

# %% [markdown]
# ## The broken code
# A project with a `models.py` that defines `Net`. A training script (a fresh interpreter)
# builds the model and saves it whole. Then the class is renamed to `TinyNet`, and a second
# fresh interpreter, the inference script, loads the file. Each script reports what happened
# as JSON.

# %%
MODELS_PY = """
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)

    def forward(self, x):
        return self.fc(x)
"""
RENAMED_PY = MODELS_PY.replace("class Net(", "class TinyNet(")  # the refactor
PROBE = [[1.0, 2.0, 3.0]]

# The training script, in two versions: it saves the whole model, or only its weights.
TRAIN_WHOLE = """
import torch
from models import Net
torch.manual_seed(0)
model = Net()
torch.save(model, "model.pt")
"""
TRAIN_WEIGHTS = """
import torch
from models import Net
torch.manual_seed(0)
model = Net()
torch.save(model.state_dict(), "weights.pt")
"""

LOAD = """
import json, os, torch
try:
{load}
    out = model(torch.tensor({probe})).tolist()
    print(json.dumps({{"error": None, "message": None, "output": out}}))
except Exception as exc:
    message = str(exc).replace(os.getcwd(), ".")
    print(json.dumps({{"error": type(exc).__name__, "message": message, "output": None}}))
"""


def save_rename_load(train, load):
    """Train-and-save in one interpreter, rename the class, load in another; return the report."""
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "models.py").write_text(MODELS_PY)
        saved = run_python(train, cwd=folder)
        if saved.returncode != 0:
            raise RuntimeError(f"the training script failed: {saved.stderr.strip()}")
        Path(folder, "models.py").write_text(RENAMED_PY)
        code = "\n".join("    " + line for line in load.strip().splitlines())
        loaded = run_python(LOAD.format(load=code, probe=PROBE), cwd=folder)
        if loaded.returncode != 0:
            raise RuntimeError(f"the inference script failed: {loaded.stderr.strip()}")
        return json.loads(loaded.stdout)


def broken(device):
    # `device` plays no part: the file fails to load before any tensor is placed.
    return save_rename_load(
        TRAIN_WHOLE,
        load='model = torch.load("model.pt", weights_only=False)',
    )


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.save` is pickle with tensors stored on the side. Pickle does not write the code of
# a class into the file, only its address: the module name and the class name
# (`models.Net`), followed by the instance's attributes. Loading imports that module and looks
# the name up; if the class was renamed, moved to another module, or lives in a `__main__`
# script that the loading process is not running, the lookup fails and so does the whole load.
# The same dependency makes the file fragile in quieter ways: the loaded object gets the
# *current* class's methods with the *old* attributes, so a changed `__init__` or `forward`
# can misbehave without any error. (Since torch 2.6, `torch.load` defaults to
# `weights_only=True` and refuses a pickled module outright; the broken code passes
# `weights_only=False`, as code written for a whole-model file must.)
#
# ## The fix
# Save the `state_dict`, a plain mapping from parameter names to tensors, and rebuild the
# model from code when loading: construct the (possibly renamed) class, then
# `load_state_dict(torch.load(path, weights_only=True))`. The file no longer names any class
# of yours, so a rename does not matter as long as the parameter names stay the same.


# %%
def fixed(device):
    return save_rename_load(
        TRAIN_WEIGHTS,
        load="""
from models import TinyNet
model = TinyNet()
model.load_state_dict(torch.load("weights.pt", weights_only=True))
""",
    )


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# PyTorch's "Serialization semantics" notes recommend saving only the parameters and warn
# that a whole pickled model is bound to the exact classes and directory layout used when it
# was saved, so it can break after a refactor or in another project; the "Saving and Loading
# Models" tutorial gives the same advice (the pickle records the path to the file holding the
# class, not the class). The error is reported again and again: pytorch/pytorch#2762, where a
# maintainer explains that pickle needs the class definition at load time, and
# pytorch/pytorch#7812 ("Can't get attribute 'Net' on <module '__main__'>"), where the class
# lived in the training script. It is pickle's behaviour, the same on every release; the
# `weights_only` argument used by both variants exists from 1.13 on.

# %% [markdown]
# ## How the harness checks it
# The symptom is an `AttributeError` naming the missing class `Net`. The opposite mistake
# fails with an `AttributeError` too: saving the `state_dict` and then treating what
# `torch.load` returns as the model (`model = torch.load("weights.pt"); model.eval()`) gives
# "'collections.OrderedDict' object has no attribute 'eval'". That is a mix-up of what was
# saved, not a missing class, and the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """Loading the whole-model file failed with an AttributeError that names the class `Net`
    (pickle could not find it in `models`)."""
    if run.error is not None:
        return False
    seen = run.value
    return seen["error"] == "AttributeError" and "'Net'" in seen["message"] and "attribute" in seen["message"].lower()


def near_miss(device):
    return save_rename_load(
        TRAIN_WEIGHTS,
        load="""
model = torch.load("weights.pt", weights_only=True)
model.eval()
""",
    )


def check(run, device):
    """The renamed class loaded the weights, and its output on the probe equals that of the
    model the training script built, rebuilt here without any file: seed 0, then
    `nn.Linear(3, 2)`, exactly what `Net.__init__` draws."""
    seen = run.value
    assert seen["error"] is None, seen
    with seeded(0):
        reference = nn.Linear(3, 2)
    with torch.no_grad():
        expected = reference(torch.tensor(PROBE))
    torch.testing.assert_close(torch.tensor(seen["output"]), expected)


CASE = Case(
    id="save-whole-model-pickles-class",
    title="torch.save(model) stores a reference to the class, not the class",
    kind="error",
    symptom_category="error",
    symptom_line="Loading a model saved whole fails with AttributeError: Can't get attribute 'Net' after a refactor.",
    # Pickle records classes by module and name; no release changed that.
    affects=(Affects("*", reason="pickle stores classes by reference; the same on every release"),),
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        Source(
            title="PyTorch notes: Serialization semantics, 'Recommended approach for saving a model'",
            url="https://pytorch.org/docs/1.3.1/notes/serialization.html",
        ),
        Source(
            title="PyTorch tutorial: Saving and Loading Models, 'Save/Load Entire Model'",
            url="https://pytorch.org/tutorials/beginner/saving_loading_models.html",
        ),
        Source(
            title="pytorch/pytorch#2762: Can't import saved pytorch model",
            url="https://github.com/pytorch/pytorch/issues/2762",
        ),
        Source(
            title="pytorch/pytorch#7812: Can't get attribute 'Net' on <module '__main__'>",
            url="https://github.com/pytorch/pytorch/issues/7812",
        ),
    ),
    tags=("serialization", "checkpoint", "pickle", "state_dict"),
    references=("https://docs.python.org/3/library/pickle.html#what-can-be-pickled-and-unpickled",),
)
