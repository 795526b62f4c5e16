# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.ao.quantization` is deprecated: `quantize_dynamic` warns
#
# The one-line recipe for a smaller, faster CPU model,
# `torch.ao.quantization.quantize_dynamic(model, {nn.Linear}, dtype=torch.qint8)`, from PyTorch's own tutorials, is quiet from 1.13 to
# 2.7. From 2.8 every call warns `DeprecationWarning: torch.ao.quantization is deprecated and
# will be removed in 2.10.`, followed by a migration list that points to torchao. The category
# is `DeprecationWarning`, hidden in a plain script but shown (and turned into an error by
# `-W error`) in test suites, which is where projects met it. The other eager and FX entry
# points carry the same warning (`prepare` and `convert`, `prepare_fx` and `convert_fx` were
# seen to warn; `quantize` and `prepare_qat` have the same decorator). The release it names
# came and went: as of 2.15.0 the eager and FX functions still run and still warn (the pt2e
# quantizers did go), and on 2.13 to 2.15 the quantized weights add a `UserWarning` of their
# own.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A small float model, dynamically quantized for CPU inference: the weights of every
# `nn.Linear` become int8, activations are quantized on the fly. The quantized kernels are
# CPU ones (fbgemm, x86, qnnpack), so the quantized model runs on CPU and its output is moved to
# the device; the warning comes from `quantize_dynamic` itself, whatever the device.

# %%
WEIGHT = [[0.5, -1.0, 0.25, 2.0], [1.5, 0.75, -0.5, 0.0], [-2.0, 0.125, 1.0, -0.25]]
BIAS = [0.1, -0.2, 0.3]
X = [[1.0, -2.0, 0.5, 3.0], [0.0, 1.0, -1.0, 2.0]]


def _model():
    with seeded(0):  # constructing a layer draws its initial weights from the global RNG
        model = nn.Sequential(nn.Linear(4, 3)).eval()
    with torch.no_grad():
        model[0].weight.copy_(torch.tensor(WEIGHT))
        model[0].bias.copy_(torch.tensor(BIAS))
    return model


def broken(device):
    quantized = torch.ao.quantization.quantize_dynamic(_model(), {nn.Linear}, dtype=torch.qint8)
    with torch.no_grad():
        return quantized(torch.tensor(X)).to(device)  # dynamic quantized kernels are CPU-only


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Quantization in torch grew three front ends in `torch.ao.quantization`: eager mode
# (`quantize_dynamic`, `prepare`/`convert`), FX graph mode and pt2e. Their development moved to the
# separate torchao library, and for 2.8 the eager and FX entry points were decorated with
# `typing_extensions.deprecated` and a message that announces removal in 2.10 (the installed 2.8.0
# shows `@typing_extensions.deprecated(DEPRECATION_WARNING)` on `quantize_dynamic`; 2.7.1 has no
# decorator); that decorator's default category is `DeprecationWarning`. The tracker pytorch/ao#2259
# planned the deletion for 2.9 or 2.10; what was deleted by 2.13 is the pt2e side
# (`torch.ao.quantization.quantizer` no longer imports), while `quantize_dynamic` still works and
# warns on 2.15.0. Separately, 2.13 deprecated the quantized dtypes themselves:
# pytorch/pytorch#184984 ("add a deprecation warning for quantized tensor creation") makes torch's
# C++ code warn, with a `UserWarning`, whenever a tensor of dtype `quint8`, `qint8` or `qint32` is
# created (by `torch.quantize_per_tensor`, or for the `qint8` weights the quantized modules store),
# and points to the tracking issue pytorch/pytorch#184982; `quantize_dynamic` triggers it too.
#
# ## The fix
# No spelling in `torch.ao.quantization` stays quiet, and torchao, the migration the message
# names, needs a recent torch (and is another dependency). What `quantize_dynamic` buys a small
# model, weights stored in 8 bits, is a few lines of plain tensor arithmetic that runs the same
# on every release: one scale per output row, `round(w / scale)` stored as `int8`, multiplied
# back in `forward`. That keeps the size saving but not fbgemm's int8 matrix kernels; for those,
# move to torchao on a torch it supports. The check compares with the float model: each
# output may differ from it by at most half a quantization step per weight, times the input.


# %%
class Int8WeightLinear(nn.Module):
    """A Linear whose weight is stored as int8 with one float scale per output row."""

    def __init__(self, linear: nn.Linear):
        super().__init__()
        weight = linear.weight.detach()
        scale = (weight.abs().amax(dim=1, keepdim=True) / 127).clamp_min(1e-12)
        self.register_buffer("qweight", torch.round(weight / scale).to(torch.int8))
        self.register_buffer("scale", scale)
        self.register_buffer("bias", linear.bias.detach().clone())

    def forward(self, x):
        return x @ (self.qweight.to(x.dtype) * self.scale).T + self.bias


def fixed(device):
    layer = Int8WeightLinear(_model()[0]).to(device)
    assert layer.qweight.dtype == torch.int8  # the weights really are stored in 8 bits
    with torch.no_grad():
        return layer(torch.tensor(X, device=device))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#153892 ("Add deprecation warning for `torch.ao.quantization`", May 2025) shows in
# its test plan an earlier form of the warning, raised when the package is imported, with the same
# migration list; what 2.8.0 ships is the decorator on the entry points, and this project could not
# confirm that this PR is the one that landed it. The plan behind it is pytorch/ao#2259
# ("torch.ao.quantization deprecation tracker": duplicate pt2e in torchao, migrate users, warn in
# pytorch, delete in 2.9 / 2.10), where a June 2026 comment drafts an RFC to finish the deletion.
# Downstream the warning shows in test logs, for example music-assistant's tests in a NixOS update
# (NixOS/nixpkgs#551547: `torch.ao.quantization.quantize_dynamic` on torch 2.12), and 2.13's
# separate deprecation of quantized tensors (pytorch/pytorch#184984) fails fms-model-optimizer's CI
# (foundation-model-stack/fms-model-optimizer#210). Observed here on CPU with this project's venvs:
# `absent` on 1.13.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1 and 2.7.1, the `DeprecationWarning` on 2.8.0,
# 2.9.1, 2.13.0, 2.14.1 and 2.15.0 (the extra `UserWarning` about quantized tensors on 2.13.0,
# 2.14.1 and 2.15.0, not on 2.8.0).

# %% [markdown]
# ## How the harness checks it
#
# The same package deprecated single functions long before, with the same words:
# `torch.ao.quantization.get_default_qconfig_dict()` warns (a `FutureWarning` on recent
# releases) that it "is deprecated and will be removed in a future version" in favour of
# `get_default_qconfig_mapping`. One old helper, not the package: the symptom must refuse it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The module-wide deprecation of torch.ao.quantization (the migration list follows it)."""
    return run.warned(DeprecationWarning, r"torch\.ao\.quantization is deprecated")


def near_miss(device):
    return sorted(torch.ao.quantization.get_default_qconfig_dict())


def check(run, device):
    """Each output is the float model's within the int8 rounding bound: a weight moves by at
    most half a step (max |row| / 127 / 2), so output i by at most that times sum |x|; and
    nothing warned (quantize_dynamic's output is within the bound too, so the warning is what
    tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    w, b, x = torch.tensor(WEIGHT), torch.tensor(BIAS), torch.tensor(X)
    exact = x @ w.T + b
    bound = x.abs().sum(dim=1, keepdim=True) * (w.abs().amax(dim=1) / 127 / 2) + 1e-5
    error = (run.value.detach().cpu().float() - exact).abs()
    assert bool((error <= bound).all()), f"outside the int8 rounding bound: error {error}, bound {bound}"
    assert not run.warnings, f"the quantization warned: {run.warnings[0].message}"


CASE = Case(
    id="ao-quantization-deprecated",
    title="torch.ao.quantization is deprecated: quantize_dynamic warns",
    kind="warning",
    symptom_category="warning",
    symptom_line="quantize_dynamic warns that torch.ao.quantization is deprecated, from torch 2.8.",
    affects=(
        Affects(
            versions=">=2.8",
            reason="the eager and FX entry points of torch.ao.quantization warn with a DeprecationWarning "
            "(observed 2.8.0 to 2.15.0; quiet on 2.7.1)",
            issue="https://github.com/pytorch/pytorch/pull/153892",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.8.0").at(
            "the first release whose torch.ao.quantization entry points warn that the module is deprecated "
            "in favour of torchao"
        ),
    ),
    tags=("upgrade", "quantization", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/153892",  # "Add deprecation warning for torch.ao.quantization"
        "https://github.com/pytorch/ao/issues/2259",  # the deprecation tracker: delete in 2.9 / 2.10
        "https://github.com/NixOS/nixpkgs/pull/551547",  # downstream: music-assistant's tests show it
        "https://github.com/pytorch/pytorch/pull/184984",  # 2.13: creating quint8/qint8/qint32 tensors warns
        "https://github.com/pytorch/pytorch/issues/184982",  # the tracking issue that warning links to
        "https://github.com/foundation-model-stack/fms-model-optimizer/issues/210",  # 2.13: quantized tensors warn too
    ),
)
