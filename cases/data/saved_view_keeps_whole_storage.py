# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Saving a slice writes the whole tensor
#
# You keep a small piece of a large tensor: the first few rows of a feature table, one sample of
# a batch, one chunk of a flattened buffer. You `torch.save` it on its own, expecting a file of a
# few kilobytes. The file has the size of the *whole* tensor the piece came from, and loading it
# back brings the whole storage into memory again. Nothing warns. You find out when a folder of
# "small" per-sample files fills the disk, or a checkpoint of sliced weights is many times larger
# than its parameter count.

# %%
import os
import tempfile

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A feature table of 100,000 float32 values (400 kB), of which we keep the first five (20 bytes)
# and save them to a file. The case records the file's size and what loads back.

# %%
N, KEEP = 100_000, 5


def saved_size(tensor):
    """Save `tensor` to a file in a temporary folder; return the file's size in bytes and the
    tensor loaded back from it."""
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "head.pt")
        torch.save(tensor, path)
        loaded = torch.load(path, weights_only=True)
        return {"file_bytes": os.path.getsize(path), "loaded": loaded}


def broken(device):
    table = torch.arange(N, dtype=torch.float32, device=device)
    head = table[:KEEP]  # a view: 5 elements of the table's storage
    return saved_size(head)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # file_bytes about 400 kB for 5 floats

# %% [markdown]
# ## Why
# Slicing, indexing with integers, `narrow`, `chunk`, `split`, `view` and `transpose` return
# *views*: new tensor objects that point into the same storage, with their own offset, shape and
# strides. `torch.save` writes storages and tensor metadata separately, and it writes a view's
# whole storage. It does this on purpose: if two views of one storage are saved together, they
# load back as two views of one storage, with the same sharing as before. The serialization notes
# describe this under "Saving and loading tensors preserves views". The same rule makes a slice
# that is saved alone drag its entire parent into the file. The tensor loaded back is again a
# 5-element view of a 100,000-element storage, so the memory comes back too.
#
# ## The fix
# Give the piece its own storage before saving: `torch.save(head.clone(), path)`. `clone()`
# copies only the elements the view shows (`contiguous()` is not enough, since a slice that is
# already contiguous is returned unchanged). For a `state_dict` whose tensors are slices of one
# flat buffer, as in some sharded or fused-parameter code, clone every value:
# `{k: v.clone() for k, v in state.items()}`. The copy also ends any sharing with the parent,
# which is what you want for a file meant to stand alone.


# %%
def fixed(device):
    table = torch.arange(N, dtype=torch.float32, device=device)
    head = table[:KEEP].clone()  # its own 5-element storage
    return saved_size(head)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The serialization notes of the PyTorch documentation explain in "Saving and loading tensors
# preserves views" that storages are saved whole, that a saved view can therefore be
# unexpectedly large, and that `clone()` before saving avoids it. pytorch/pytorch#40412 added that
# passage to fix pytorch/pytorch#40157 ("Saving Sliced Tensors writes entire unsliced Tensor",
# 3.9 MB for a 1,000-element slice). The same report was filed many times:
# pytorch/pytorch#1995 ("torch.save is saving too much", 2017, where the maintainer answered that
# it is expected because sharing between views must survive a round trip),
# pytorch/pytorch#8109 (the workaround given there: `.clone()` first), pytorch/pytorch#53419
# (2.4 GB written for a 72 MB slice), pytorch/pytorch#95278 (the pieces of `torch.chunk`) and
# pytorch/pytorch#104523 (`x[:5]` as large as `x`). DeepSpeed documents the same effect as
# "checkpoint bloat" for slices of its flattened ZeRO buffers and ships
# `clone_tensors_for_torch_save` to work around it. The behaviour has held since the first
# releases. pytorch/pytorch#1995 describes it in 2017, and no release has changed it.

# %% [markdown]
# ## How the harness checks it
# A large file is not always a view. Saving a genuinely large tensor (the whole table) also
# gives a 400 kB file, but what loads back has all 100,000 elements: the size is the data's
# own. The symptom requires a file at least as large as the parent's storage *and* a loaded
# tensor of only five elements. The fix's file must be exactly as large as the file of a fresh
# five-element tensor built from a Python list on the same device.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """A five-element tensor was saved into a file at least as large as its parent's storage
    (N float32 values): the whole storage went to disk."""
    if run.error is not None:
        return False
    return run.value["loaded"].numel() == KEEP and run.value["file_bytes"] >= N * 4


def near_miss(device):
    return saved_size(torch.arange(N, dtype=torch.float32, device=device))  # big, and meant to be


def check(run, device):
    """The values are 0..4, and the file is exactly the size of the file of a fresh tensor of
    the same five values, built from a Python list (so it owns a storage of five elements)."""
    expected = torch.tensor([float(i) for i in range(KEEP)], device=device)
    torch.testing.assert_close(run.value["loaded"], expected)
    reference = saved_size(expected)["file_bytes"]
    assert run.value["file_bytes"] == reference, f"{run.value['file_bytes']} bytes, a fresh tensor takes {reference}"


CASE = Case(
    id="saved-view-keeps-whole-storage",
    title="Saving a slice writes the whole tensor",
    kind="performance",
    symptom_category="slow-or-memory",
    symptom_line="torch.save(big[:5]) writes a file as large as big: the whole storage is saved.",
    affects=(Affects("*", reason="torch.save writes whole storages so that views keep their sharing; by design"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch docs: Serialization semantics, Saving and loading tensors preserves views",
            url="https://docs.pytorch.org/docs/stable/notes/serialization.html#preserve-storage-sharing",
        ),
        Source(
            title="pytorch/pytorch#40157: Saving Sliced Tensors writes entire unsliced Tensor",
            url="https://github.com/pytorch/pytorch/issues/40157",
        ),
        Source(
            title="pytorch/pytorch#1995: torch.save is saving too much",
            url="https://github.com/pytorch/pytorch/issues/1995",
        ),
        Source(
            title="DeepSpeed docs: Model Checkpointing, Avoiding ZeRO Checkpoint Bloat",
            url="https://deepspeed.readthedocs.io/en/latest/model-checkpointing.html",
        ),
    ),
    tags=("serialization", "save", "view", "storage", "clone"),
    references=(
        "https://github.com/pytorch/pytorch/pull/40412",  # the docs passage, fixing #40157
        "https://github.com/pytorch/pytorch/issues/8109",
        "https://github.com/pytorch/pytorch/issues/53419",
        "https://github.com/pytorch/pytorch/issues/95278",
        "https://github.com/pytorch/pytorch/issues/104523",
    ),
)
