# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.qr` and `torch.cholesky` are removed: a warning for years, then a `RuntimeError`
#
# Gaussian-process, Kalman-filter and orthogonal-initialisation code written before
# `torch.linalg` factorises with `torch.cholesky(cov)` and `torch.qr(a)`. From 1.9 each call
# printed, once per process, a `UserWarning` that the function "is deprecated in favor of
# torch.linalg.cholesky and will be removed in a future PyTorch release", with the line that
# replaces it, and the results were right, so many projects never changed it. In 2.14 the
# removal came: the same line raises `RuntimeError: This function was deprecated since version
# 1.9 and is now removed.`, followed by the replacement, and so do the tensor methods
# `.cholesky()` and `.qr()`.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A covariance's Cholesky factor (to draw correlated noise) and an orthonormal basis (to
# initialise a weight), the way both were written for 1.x. The warnings come from C++ with
# `TORCH_WARN_ONCE`, once per process: to observe every run, `broken` switches on
# `torch.set_warn_always` for the calls and restores it.

# %%
COV = [[4.0, 2.0], [2.0, 3.0]]
BASIS = [[3.0, 1.0], [4.0, 2.0]]


def _warn_every_time(fn):
    previous = torch.is_warn_always_enabled()
    torch.set_warn_always(True)
    try:
        return fn()
    finally:
        torch.set_warn_always(previous)


def _factorise(cholesky, qr, device):
    cov, basis = torch.tensor(COV, device=device), torch.tensor(BASIS, device=device)
    lower = cholesky(cov)
    q, r = qr(basis)
    return {"L": lower, "Q": q, "R": r}


def broken(device):
    return _warn_every_time(lambda: _factorise(torch.cholesky, torch.qr, device))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# In 1.9 `torch.linalg` gained NumPy-compatible factorisations, and the old functions in the
# `torch` namespace were deprecated (pytorch/pytorch#57725 for `cholesky`, #57745 for `qr`),
# with a `TORCH_WARN_ONCE` that printed the replacement line. The removal was first proposed in
# December 2021 (pytorch/pytorch#69857, split into one PR per function); `eig`, `lstsq`,
# `solve` and `matrix_rank` are gone on 1.13.1 and `symeig` on 2.1.2 (it still warns on
# 1.13.1), while the `qr` removal was reverted and the `cholesky` one never landed; both came
# back as fresh PRs in June 2026 (pytorch/pytorch#186815 and #186817, first released in 2.14). The functions are still there as stubs that raise a `RuntimeError` with the
# replacement, so the failure names its fix.
#
# ## The fix
# `torch.linalg.cholesky(cov)` and `torch.linalg.qr(a)`, which exist on every release of the
# matrix (since 1.8) and never warned. They give the same factors for the same input:
# `linalg.cholesky` returns the lower factor (the old `upper=True` is `.mH` of it), and
# `linalg.qr`'s default `mode="reduced"` is the old `some=True`. The check multiplies the
# factors back and compares with the Cholesky factor worked out by hand.


# %%
def fixed(device):
    return _factorise(torch.linalg.cholesky, torch.linalg.qr, device)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The 1.9 deprecations are pytorch/pytorch#57725 (`torch.cholesky`) and #57745 (`torch.qr`),
# as TorchFix's table of deprecated symbols records them. pytorch/pytorch#69857 ("Remove
# deprecated linear algebra related functions", December 2021) split the removals into one PR
# per function; the one for `qr` (#70989) was reverted after landing in 2022, the one for
# `cholesky` (#70979) was replaced, and both were done again as pytorch/pytorch#186815 ("Remove
# deprecated torch.qr", a reland of #70989) and #186817 ("Remove deprecated torch.cholesky",
# a fresh replacement for #70979), both June 2026. Downstream, Intel's XPU backend removed
# its own `cholesky` kernel after it (intel/torch-xpu-ops#3959) and google/torchax#108 had to
# provide `aten.qr` itself for torch newer than 2.13; libraries long kept the old calls behind
# the warning (Keras' torch backend until keras-team/keras#19648, 2024), and projects that moved
# early did so from it: facebook/Ax#1099 (`torch.linalg.qr`, citing the 2022 removal PR) and
# facebookresearch/beanmachine#874 (CI failing on the 1.9 deprecations). Observed here on CPU
# with this project's venvs: the `UserWarning` on 1.13.1, 2.1.2, 2.2.2, 2.3.1, 2.4.1, 2.7.1,
# 2.8.0, 2.9.1 and 2.13.0, the `RuntimeError` on 2.14.1 and 2.15.0, for both functions (and,
# in a separate probe, for the tensor methods `.qr()` and `.cholesky()` on 2.14.1 and 2.15.0).

# %% [markdown]
# ## How the harness checks it
#
# The same `RuntimeError`, with the same opening words, comes from the linear-algebra
# functions removed earlier, such as `torch.solve` (replaced by `torch.linalg.solve`, with its
# arguments swapped): on every release of the matrix, 1.13.1 included, it says "This function
# was deprecated since version 1.9 and is now removed". Another function, removed long before:
# the symptom must refuse it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import release_notes


def symptom(run):
    """From 2.14 the call raises RuntimeError naming torch.cholesky or torch.qr as removed;
    before, it warns that they are deprecated in favour of torch.linalg."""
    if run.raised(RuntimeError, r"now removed\. `?torch\.(cholesky|qr)`? is deprecated"):
        return "RuntimeError"
    if run.warned(UserWarning, r"torch\.(cholesky|qr) is deprecated in favor of torch\.linalg"):
        return "UserWarning"
    return False


def near_miss(device):
    cov = torch.tensor(COV, device=device)
    return torch.solve(torch.ones(2, 1, device=device), cov)


def check(run, device):
    """L is the lower factor worked out by hand, [[2, 0], [1, sqrt(2)]], and L L^T is the
    covariance; Q is orthonormal, R upper triangular and Q R the basis; and nothing warned (the
    deprecated functions return the same factors, so before 2.14 the warning tells them apart)."""
    assert run.error is None, f"raised {run.error!r}"
    lower, q, r = run.value["L"], run.value["Q"], run.value["R"]
    cov, basis = torch.tensor(COV, device=device), torch.tensor(BASIS, device=device)
    torch.testing.assert_close(lower, torch.tensor([[2.0, 0.0], [1.0, 2.0**0.5]], device=device))
    torch.testing.assert_close(lower @ lower.T, cov)
    torch.testing.assert_close(q.T @ q, torch.eye(2, device=device))
    torch.testing.assert_close(r, torch.triu(r))
    torch.testing.assert_close(q @ r, basis)
    assert not run.warnings, f"the factorisation warned: {run.warnings[0].message}"


CASE = Case(
    id="qr-cholesky-removed",
    title="torch.qr and torch.cholesky are removed: a warning for years, then a RuntimeError",
    kind="error",
    symptom_category="error",
    symptom_line="torch.qr and torch.cholesky, deprecated for years, now raise.",
    affects=(
        Affects(
            versions=">=2.14",
            form="RuntimeError",
            reason="torch.qr and torch.cholesky raise 'is now removed' (observed 2.14.1 and 2.15.0)",
            issue="https://github.com/pytorch/pytorch/pull/186817",
        ),
        Affects(
            versions=">=1.9,<2.14",
            form="UserWarning",
            since="pytorch/pytorch#57725 and #57745, the 1.9 deprecations of torch.cholesky and torch.qr; "
            "observed on 1.13.1 to 2.13.0",
            reason="torch.qr and torch.cholesky warn that they are deprecated in favour of torch.linalg "
            "(observed 1.13.1 to 2.13.0)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        release_notes("2.14.0").at("the first release in which torch.qr and torch.cholesky raise instead of warning"),
    ),
    tags=("upgrade", "linalg", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/57725",  # 1.9: torch.cholesky deprecated
        "https://github.com/pytorch/pytorch/pull/57745",  # 1.9: torch.qr deprecated
        "https://github.com/pytorch/pytorch/pull/69857",  # 2021: the first attempt to remove them
        "https://github.com/pytorch/pytorch/pull/186815",  # the removal of torch.qr
        "https://github.com/pytorch/pytorch/pull/186817",  # the removal of torch.cholesky
        "https://github.com/intel/torch-xpu-ops/pull/3959",  # downstream: XPU backend follows the removal
        "https://github.com/google/torchax/pull/108",  # downstream: torchax adapts to the aten.qr removal (> 2.13)
        "https://github.com/keras-team/keras/issues/19648",  # downstream: Keras' torch backend called torch.cholesky
        "https://github.com/facebook/Ax/pull/1099",  # downstream: Ax moves to torch.linalg.qr
        "https://github.com/facebookresearch/beanmachine/pull/874",  # downstream: to torch.linalg.cholesky
    ),
)
