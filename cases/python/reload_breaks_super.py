# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `super(Cls, self)` fails after a module reload
#
# In a notebook you build a model from your own `mynet.py`, edit the file, and reload it
# (`importlib.reload`, or IPython's `%autoreload` doing it for you). The next call on the model
# you already had, here a plain `net.train()`, fails with
# `TypeError: super(type, obj): obj must be an instance or subtype of type`, a message that
# seems to say your model is not an instance of its own class.

# %%
import json
import tempfile
from pathlib import Path

from torch_pitfalls import observe, run_python

# %% [markdown]
# ## The broken code
# `mynet.py` overrides `train()` to keep BatchNorm frozen, calling the parent with the two-argument
# `super(Net, self)` that older code uses everywhere. A fresh interpreter (the test process's
# modules are never reloaded) imports it in a temporary folder, builds `net`, reloads the
# module, and calls `net.train()` on the model it already had; it reports the result as JSON.

# %%
MODULE = """
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super({how}).__init__()
        self.bn = nn.BatchNorm1d(2)

    def train(self, mode=True):
        super({how}).train(mode)
        self.bn.eval()  # keep the BatchNorm statistics frozen
        return self
"""

SESSION = """
import importlib, json
import mynet

net = mynet.Net()
{reload}
try:
    net.train()
    seen = {{"error": None, "training": net.training, "bn_training": net.bn.training}}
except TypeError as exc:
    seen = {{"error": "TypeError", "message": str(exc)}}
seen["same_class"] = type(net) is mynet.Net
print(json.dumps(seen))
"""
RELOAD = "importlib.reload(mynet)  # what %autoreload does after you save the file"


def _session(module_text, reload=RELOAD):
    with tempfile.TemporaryDirectory() as folder:
        Path(folder, "mynet.py").write_text(module_text)
        child = run_python(SESSION.format(reload=reload), cwd=folder)
        if child.returncode != 0:
            raise RuntimeError(f"session failed: {child.stderr.strip()}")
        return json.loads(child.stdout)


def broken(device):
    # `device` plays no part: the failure is in Python's method lookup, before any tensor math.
    return _session(MODULE.format(how="Net, self"))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `reload` runs the module's code again in the same module object, so the name `mynet.Net` is
# rebound to a brand-new class. The model built earlier still belongs to the old class, and its
# methods are the old functions, but those functions look up the global name `Net` when they run,
# and find the new class. `super(Net, self)` then asks for the parent of a class that `self` is
# not an instance of, and Python refuses. `%autoreload` tries to patch old classes in place, but
# IPython documents that reloading is not always reliable, and this error is what slips through
# (ipython/ipython#8807).
#
# ## The fix
# Use the zero-argument `super()`: it takes the class from the function's own definition (the
# `__class__` cell), not from the global name, so the old model's methods keep working after a
# reload. Re-creating the model after the reload works as well.


# %%
def fixed(device):
    return _session(MODULE.format(how=""))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's troubleshooting list says that `super(type, obj) obj must be an instance` may be caused by
# IPython reloading a module, and that the code needs to be refreshed. The IPython side is
# ipython/ipython#8807 (autoreload and this TypeError, answered as a limit of reloading), and
# holoviz/param#288 found that switching `super(Cls, self)` to `super()` made it go away. It is
# Python behaviour, shown with every torch, so `affects` has no version bound. Only the CPU run
# was observed by this project; nothing here depends on the device.

# %% [markdown]
# ## How the harness checks it
#
# The same message without any reload is another bug. A `train()` copied from another class,
# `Backbone`, still says `super(Backbone, self)` inside `Net`, which does not derive from
# `Backbone`: the call fails with the very same `TypeError`, but `net` is still of class
# `mynet.Net`. Reloading has nothing to do with it, and the symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """`net.train()` raised the super() TypeError, and `net` is no longer of class `mynet.Net`."""
    if run.error is not None:
        return False
    seen = run.value
    return (
        seen.get("error") == "TypeError"
        and "super(type, obj)" in seen.get("message", "")
        and seen.get("same_class") is False
    )


COPY_PASTED = """
import torch.nn as nn


class Backbone(nn.Module):
    def train(self, mode=True):
        super(Backbone, self).train(mode)
        return self


class Net(nn.Module):
    def __init__(self):
        super(Net, self).__init__()
        self.bn = nn.BatchNorm1d(2)

    def train(self, mode=True):
        super(Backbone, self).train(mode)  # copied from Backbone, the class name left as it was
        self.bn.eval()
        return self
"""


def near_miss(device):
    return _session(COPY_PASTED, reload="")


def check(run, device):
    """`net.train()` ran after the reload and did what the method says, written out by hand:
    the model in training mode, its BatchNorm kept frozen (eval)."""
    seen = run.value
    assert seen["error"] is None, seen
    assert (seen["training"], seen["bn_training"]) == (True, False), seen


CASE = Case(
    id="reload-breaks-super",
    title="`super(Cls, self)` fails after a module reload",
    kind="error",
    symptom_category="error",
    symptom_line="After reloading a module, super(Cls, self) raises TypeError on an existing object.",
    # How Python rebinds names on reload, not torch's code: the same with every torch version.
    affects=(Affects(reason="Python's reload semantics; the same with every torch"),),
    devices=("cpu",),
    device_independent=True,  # the variants never use their device
    sources=(
        S1.at(
            "troubleshooting list: 'super(type, obj): obj must be an instance' can come from IPython reloading a module"
        ),
    ),
    tags=("python", "reload", "notebook"),
    references=(
        "https://github.com/ipython/ipython/issues/8807",  # autoreload: the same TypeError
        "https://github.com/holoviz/param/issues/288",  # autoreload; zero-argument super() cures it
    ),
)
