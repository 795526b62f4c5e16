# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A pre-norm `nn.TransformerEncoder` warns about nested tensors
#
# A pre-norm transformer (`TransformerEncoderLayer(..., norm_first=True)`, the layout most
# recent models use) is stacked with `nn.TransformerEncoder(layer, num_layers)`. On 1.13 and
# 2.0 building it is quiet. From 2.1 the constructor warns: "enable_nested_tensor is True, but
# self.use_nested_tensor is False because encoder_layer.norm_first was True". Nothing the model
# computes changes: the warning reports that an inference fast path, which a pre-norm layer
# never could use, is off.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

D_MODEL, NHEAD, FF = 8, 2, 16

# %% [markdown]
# ## The broken code


# %%
def _layer(device, **kw):
    return nn.TransformerEncoderLayer(
        D_MODEL, NHEAD, FF, dropout=0.0, batch_first=True, norm_first=True, device=device, **kw
    )


def _src(device):
    return torch.linspace(-1.0, 1.0, 2 * 3 * D_MODEL, device=device).reshape(2, 3, D_MODEL)


def broken(device):
    with seeded(0):
        encoder = nn.TransformerEncoder(_layer(device), num_layers=2)  # enable_nested_tensor defaults to True
    encoder.eval()
    with torch.no_grad():
        return encoder(_src(device))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `TransformerEncoder` can convert a padded batch to a nested tensor and run the fused
# inference kernels, which skip the padding. That path supports only some layers: post-norm,
# batch-first, ReLU or GELU, and so on. Up to 2.0 the encoder checked those conditions in
# `forward` and quietly fell back to the ordinary path. PR #102045 (2.1) moved the checks on
# the layer to construction time, so that TorchScript need not run `isinstance` at run time;
# since then, when `enable_nested_tensor=True` (the default) and the layer cannot use the path,
# the constructor says why and sets `use_nested_tensor = False`.
#
# ## The fix
# A pre-norm encoder never takes the nested-tensor path, so say so:
# `nn.TransformerEncoder(layer, num_layers, enable_nested_tensor=False)`. The parameter exists
# since 1.12. The outputs are the same; the check recomputes them by applying the layer twice
# by hand (the encoder's layers are deep copies of the one it was given).


# %%
def fixed(device):
    with seeded(0):
        encoder = nn.TransformerEncoder(_layer(device), num_layers=2, enable_nested_tensor=False)
    encoder.eval()
    with torch.no_grad():
        return encoder(_src(device))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#102045 ("Move static checks of layers[0] (e.g., isinstance check) to model
# build time", May 2023) moved the fast-path checks into `TransformerEncoder.__init__`; from
# 2.1.2 on, the constructor in the installed torch warns with the reason when
# `enable_nested_tensor` is left on. Downstream, CUNY-CL/yoyodyne#214 reported the message on
# each model build and weighed turning `norm_first` off against `enable_nested_tensor=False`;
# jsboige/CoursIA#15142 chose the latter. pytorch/pytorch#137173 reports the `batch_first`
# variant that a default `nn.Transformer()` prints.
#
# Observed here on CPU: quiet on 1.13.1 and 2.0.1, the warning on 2.1.2, 2.2.2, 2.4.1, 2.6.0,
# 2.13.0 and 2.15.0.

# %% [markdown]
# ## How the harness checks it
#
# The same constructor warning has other reasons. A layer built with the default
# `batch_first=False` (the `nn.Transformer()` default) makes it say "because
# encoder_layer.self_attn.batch_first was not True": the same `UserWarning` from the same
# line, about another setting.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The constructor warns that the nested-tensor path is off because of norm_first."""
    return run.warned(UserWarning, r"enable_nested_tensor is True.*norm_first")


def near_miss(device):
    with seeded(0):
        layer = nn.TransformerEncoderLayer(D_MODEL, NHEAD, FF, dropout=0.0, device=device)  # batch_first=False
        return nn.TransformerEncoder(layer, num_layers=2)


def check(run, device):
    """The output is the same layer applied twice to the input, and building the encoder
    emitted no warning (the broken encoder computes the same values)."""
    with seeded(0):
        layer = _layer(device)
    layer.eval()
    with torch.no_grad():
        expected = layer(layer(_src(device)))
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"building the encoder warned: {run.warnings[0].message}"


CASE = Case(
    id="transformer-norm-first-nested-tensor",
    title="A pre-norm nn.TransformerEncoder warns about nested tensors",
    kind="warning",
    symptom_category="warning",
    symptom_line="A pre-norm nn.TransformerEncoder warns about nested tensors, from torch 2.1.",
    affects=">=2.1",
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.1.0").at(
            "torch.nn: TransformerEncoder checks its fast-path conditions at construction (#102045)"
        ),
    ),
    tags=("upgrade", "transformer", "nested_tensor"),
    references=(
        "https://github.com/pytorch/pytorch/pull/102045",  # checks moved to construction time
        "https://github.com/CUNY-CL/yoyodyne/issues/214",  # downstream: the warning on every model build
        "https://github.com/jsboige/CoursIA/pull/15142",  # downstream fix: enable_nested_tensor=False
        "https://github.com/pytorch/pytorch/issues/137173",  # the batch_first sibling of the warning
    ),
)
