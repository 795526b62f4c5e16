# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `x.T` on a 0-d tensor is deprecated
#
# A weight-conversion script moves a checkpoint from a framework that stores matrices the
# other way round, so it transposes every entry: `{k: v.T for k, v in state.items()}`. Most
# entries are matrices, but a few are scalars stored as 0-d tensors (a CLIP-style
# `logit_scale`, a temperature, a step counter). `.T` on a 0-d tensor is the identity, and on
# 1.13 it is quiet. After the upgrade to 2.0 the script prints `UserWarning: Tensor.T is
# deprecated on 0-D tensors. This function is the identity in these cases.` The values are
# unchanged; the spelling is on its way out, and the same goes for `.mT`, `.H` and `.mH`.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The warning comes from C++ with `TORCH_WARN_ONCE`: torch prints it once per process. To
# observe every run, `broken` switches on `torch.set_warn_always` for the call and restores it
# (the user sees the same warning once).

# %%
STATE = {
    "proj.weight": [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]],  # a matrix stored (out, in) the other way round
    "logit_scale": 2.6592,  # a scalar parameter, a 0-d tensor
}


def _state(device):
    return {k: torch.tensor(v, device=device) for k, v in STATE.items()}


def broken(device):
    state = _state(device)
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        return {k: v.T for k, v in state.items()}  # .T on the 0-d logit_scale warns on 2.0
    finally:
        torch.set_warn_always(previous)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `Tensor.T` is the NumPy-style transpose, meant for matrices. pytorch/pytorch#64180 (2021)
# deprecated it on tensors that are not 2-d but left 0-d alone, since it is the identity
# there. pytorch/pytorch#92143 (2.0) removed that exception for `.T`, `.mT`, `.H` and `.mH`:
# transposing a scalar was undocumented and an edge case every implementation of these
# attributes had to carry, so it now warns like the other non-matrix cases.
#
# ## The fix
# Use `Tensor.t()` where a tensor may have fewer than 3 dimensions: it transposes a matrix and
# returns 0-d and 1-d tensors as they are, on every release from 1.13.1 to 2.15.0, without a
# warning. (Or transpose only the entries that are matrices: `v.T if v.ndim == 2 else v`.)
# The check builds the expected state by hand: the matrix with rows and columns swapped, the
# scalar unchanged.


# %%
def fixed(device):
    state = _state(device)
    return {k: v.t() for k, v in state.items()}  # t(): 0-d and 1-d returned as they are


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 2.0.0 release notes list it under Deprecations, Python API: "Deprecate `tensor.mT`,
# `tensor.T`, `tensor.mH`, `tensor.H` on 0D-tensors" (pytorch/pytorch#92143), with the 1.13
# and 2.0 behaviour side by side. Code that looks at every attribute of a tensor meets it too:
# johnmarktaylor91/torchlens#16 reported the `.H`/`.mH`/`.mT` warnings while logging a
# torchvision model, and pytorch/pytorch#135693 the same warnings from the Python REPL's tab
# completion on a 0-d tensor. Observed here on CPU: quiet on 1.13.1, the warning from 2.0.1 on
# (releases run: 1.13.1, 2.0.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.5.1, 2.6.0, 2.7.1, 2.8.0, 2.9.1,
# 2.10.0, 2.13.0, 2.14.1 and 2.15.0; each showed `absent` on 1.13.1 and `reproduced` from 2.0.1
# on).

# %% [markdown]
# ## How the harness checks it
#
# `.T` has an older deprecation of the same category: on a tensor with more than 2 dimensions
# (a batch of matrices), where `.T` reverses all the dimensions. Every release of the matrix
# warns about that one; it is another misuse, not this change.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """The C++ deprecation warning about .T on a 0-d tensor."""
    return run.warned(UserWarning, r"Tensor\.T is deprecated on 0-D tensors")


def near_miss(device):
    batch = torch.zeros(5, 2, 3, device=device)
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        return batch.T.shape  # UserWarning: the use of `x.T` on tensors of dimension other than 2
    finally:
        torch.set_warn_always(previous)


def check(run, device):
    """The matrix is transposed element by element and the scalar is unchanged; and the
    conversion did not warn (.T gives the same values, so the warning is what tells it apart)."""
    assert run.error is None, f"raised {run.error!r}"
    rows = STATE["proj.weight"]
    swapped = [[rows[i][j] for i in range(len(rows))] for j in range(len(rows[0]))]
    torch.testing.assert_close(run.value["proj.weight"], torch.tensor(swapped, device=device))
    torch.testing.assert_close(run.value["logit_scale"], torch.tensor(STATE["logit_scale"], device=device))
    assert run.value["logit_scale"].dim() == 0
    assert not run.warnings, f"the conversion warned: {run.warnings[0].message}"


CASE = Case(
    id="tensor-t-on-zero-dim",
    title="x.T on a 0-d tensor is deprecated",
    kind="warning",
    symptom_category="warning",
    symptom_line="x.T on a 0-d tensor warns that it is deprecated.",
    affects=(
        Affects(
            versions=">=2.0",
            reason="Tensor.T (and .mT, .H, .mH) on a 0-d tensor warns from C++ "
            "(observed: quiet on 1.13.1, UserWarning from 2.0.1 to 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/92143",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.0.0").at(
            "Deprecations, Python API: Deprecate tensor.mT, tensor.T, tensor.mH, tensor.H on 0D-tensors (#92143)"
        ),
    ),
    tags=("upgrade", "transpose", "scalar", "deprecation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/64180",  # 2021: .T deprecated on dims other than 0 and 2
        "https://github.com/pytorch/pytorch/pull/92143",  # 2.0: .T/.mT/.H/.mH deprecated on 0-d too
        "https://github.com/johnmarktaylor91/torchlens/issues/16",  # downstream: torchlens prints it
        "https://github.com/pytorch/pytorch/issues/135693",  # even tab completion in the REPL triggers it
    ),
)
