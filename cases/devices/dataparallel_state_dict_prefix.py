# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A `DataParallel` checkpoint does not load into the plain model
#
# You trained with `model = nn.DataParallel(model)`, saved `model.state_dict()`, and now load it
# into the same architecture for inference. `load_state_dict` refuses with `RuntimeError: Error(s)
# in loading state_dict`, followed by `Missing key(s) in state_dict: "weight", ...` and
# `Unexpected key(s) in state_dict: "module.weight", ...`. Every tensor is in the file, but each
# name carries an extra `module.` prefix.

# %%
import torch
from torch import nn
from torch.nn.modules.utils import consume_prefix_in_state_dict_if_present

from torch_pitfalls import observe, seeded


def trained_weights(device):
    """A small "trained" model on `device`, and a copy of its weights taken before wrapping."""
    with seeded(0):
        net = nn.Linear(3, 2).to(device)
    expected = {name: t.detach().clone() for name, t in net.state_dict().items()}
    return net, expected


# %% [markdown]
# ## The broken code
# Wrap, save the wrapper's state dict (here kept in memory, as `torch.save` would write it), and
# load it into a fresh, unwrapped model of the same shape.


# %%
def broken(device):
    net, _ = trained_weights(device)
    parallel = nn.DataParallel(net)
    checkpoint = parallel.state_dict()  # keys: "module.weight", "module.bias"
    with seeded(1):
        fresh = nn.Linear(3, 2).to(device)
    fresh.load_state_dict(checkpoint)
    return fresh


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `DataParallel` is an ordinary `nn.Module` that stores the model you give it as its submodule
# `self.module`. `state_dict()` names every tensor by its path from the module it is called on, so
# the wrapper's weights become `module.weight` and `module.bias`. The plain model expects `weight`
# and `bias`, and with `strict=True` (the default) any difference in key names is an error. This
# happens without a GPU as well. When no CUDA device is available, `DataParallel` sets `device_ids
# = []`, and its `forward` simply calls the wrapped module, so it parallelises nothing. It still
# wraps the model, so its state dict carries the same prefix (observed on 2.13.0, CPU).
#
# ## The fix
# Save the inner model: `torch.save(parallel.module.state_dict(), path)`. That checkpoint loads
# into the plain model and into a model that you wrap again later. For checkpoints already written
# with the prefix, strip it before loading. `torch.nn.modules.utils.consume_prefix_in_state_dict_if_present(sd, "module.")`
# does this in place, including the metadata.


# %%
def fixed(device):
    net, _ = trained_weights(device)
    parallel = nn.DataParallel(net)
    loaded = []
    for checkpoint in (parallel.module.state_dict(), parallel.state_dict()):
        consume_prefix_in_state_dict_if_present(checkpoint, "module.")  # a no-op on the first
        with seeded(1):
            fresh = nn.Linear(3, 2).to(device)
        fresh.load_state_dict(checkpoint)  # strict: any key that does not match raises
        loaded.append({name: t.detach().clone() for name, t in fresh.state_dict().items()})
    return loaded  # what each of the two fresh models holds after loading


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes list the error `Unexpected key(s) in state_dict: "module.conv1.weight", ...`
# in their troubleshooting section. They explain that the model was saved under `DataParallel` but
# loaded without it, and they add that checkpoints which depend on how the model was run on GPUs
# are awkward. Upstream, pytorch/pytorch#3805 (2017) is the same report. The maintainers there
# explained that the prefix comes from the wrapper and that they chose to keep it so that
# `DataParallel` behaves like any other module. The same thread notes that, with PR #3318
# (pytorch/pytorch#3301, "Loading DataParallel modules on CPU should be a noop"), a wrapped
# model can be built on a machine without a GPU. This is why the lower end of `affects` is 0.4: before it, building the
# wrapper without CUDA failed with an `IndexError`, and `load_state_dict` reported unexpected keys
# as a `KeyError`. The helper that strips the prefix was requested in pytorch/pytorch#41048 and
# added by pytorch/pytorch#53224. `DistributedDataParallel` stores the model as `module` too and
# has the same prefix. The upper end of `affects` is open because no change is known.

# %% [markdown]
# ## How the harness checks it
#
# The same two lists also appear when the architecture itself changed, for instance a layer
# that was moved into an `nn.Sequential` after the checkpoint was saved. The keys then differ by
# `0.`, not by `module.`: no wrapper is involved, and stripping `module.` would not help.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """load_state_dict raised, naming the plain keys missing and the prefixed ones unexpected."""
    return run.raised(RuntimeError, r"Missing key\(s\) in state_dict") and run.raised(
        RuntimeError, r'Unexpected key\(s\) in state_dict: "module\.weight"'
    )


def near_miss(device):
    with seeded(0):
        saved = nn.Sequential(nn.Linear(3, 2)).to(device)  # keys: "0.weight", "0.bias"
        fresh = nn.Linear(3, 2).to(device)
    fresh.load_state_dict(saved.state_dict())
    return fresh


def check(run, device):
    """Both fresh models hold exactly the trained weights, compared with a copy taken before
    DataParallel ever saw the model (`trained_weights`, built again with the same seed)."""
    _, expected = trained_weights(device)
    assert len(run.value) == 2, run.value
    for state in run.value:
        assert sorted(state) == ["bias", "weight"], sorted(state)
        torch.testing.assert_close(state["weight"], expected["weight"], rtol=0, atol=0)
        torch.testing.assert_close(state["bias"], expected["bias"], rtol=0, atol=0)


CASE = Case(
    id="dataparallel-state-dict-prefix",
    title="A DataParallel checkpoint does not load into the plain model",
    kind="error",
    symptom_category="error",
    symptom_line="A DataParallel checkpoint will not load: unexpected keys starting with module.",
    # The prefix is DataParallel's attribute name, kept by design (issue 3805, 2017). On a machine
    # without a GPU, DataParallel has been a pass-through wrapper since PR 3318 (0.4); before that
    # it could not be built there, and load_state_dict raised KeyError("unexpected key ...").
    # (PR 3318 was merged in late 2017; 0.4 is the first release certain to hold it.)
    affects=(
        Affects(
            ">=0.4",
            since="PR 3318 (pytorch/pytorch#3301), in 0.4: DataParallel can be built on a machine without a GPU",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S1.at(
            'Troubleshooting: Unexpected key(s) in state_dict: "module.conv1.weight", ... after training with DataParallel'
        ),
    ),
    tags=("devices", "dataparallel", "state_dict", "checkpoint"),
    references=(
        # apaszke: the wrapper adds the `module.` prefix; hiding it was considered and rejected
        "https://github.com/pytorch/pytorch/issues/3805",
        # DataParallel on a CPU-only machine should be a no-op (fixed by PR 3318)
        "https://github.com/pytorch/pytorch/issues/3301",
        # request for a helper to strip the prefix, and the PR that added
        # torch.nn.modules.utils.consume_prefix_in_state_dict_if_present
        "https://github.com/pytorch/pytorch/issues/41048",
        "https://github.com/pytorch/pytorch/pull/53224",
    ),
)
