# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.symeig` is gone from 2.0
#
# A spectral-clustering step, a second-order optimiser or a curvature probe diagonalises a
# symmetric matrix with `evals, evecs = torch.symeig(A, eigenvectors=True)`. The line was written
# before `torch.linalg` existed. On 1.13 it still works: it prints a `UserWarning` once ("torch.symeig is
# deprecated in favor of torch.linalg.eigh and will be removed in a future PyTorch release") and
# returns the eigenpairs. After the upgrade to 2.0 the same line stops the run with
# `RuntimeError: This function was deprecated since version 1.9 and is now removed. Please use
# the torch.linalg.eigh function instead.` The name `torch.symeig` still exists; calling it is what fails.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The eigenpairs of a small symmetric matrix whose eigenvalues are known by hand (1, 3 and 5).
# The 1.13 warning comes from C++ with `TORCH_WARN_ONCE`, once per process; `observe` (and the
# harness) switch on `torch.set_warn_always` so that every run shows what the first call of a
# fresh script shows.

# %%
A = [[2.0, 1.0, 0.0], [1.0, 2.0, 0.0], [0.0, 0.0, 5.0]]


def broken(device):
    a = torch.tensor(A, device=device)
    return tuple(torch.symeig(a, eigenvectors=True))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `torch.linalg` (1.8, with NumPy's names and conventions) replaced the older linear-algebra
# functions one by one. pytorch/pytorch#57732 deprecated `torch.symeig` for 1.9. From then on
# every call warned once per process and pointed to `torch.linalg.eigh`. pytorch/pytorch#70988
# removed the kernel for 2.0. To give old code a clear message rather than a bare
# `AttributeError`, 2.0 kept the name `torch.symeig` as a stub in `torch/_linalg_utils.py` that
# raises a `RuntimeError` with the migration recipe. So code that checks
# `hasattr(torch, "symeig")` still finds it and crashes anyway.
#
# The replacement does not take the same default triangle. `symeig` read the **upper** triangle
# by default (`upper=True`), `linalg.eigh` reads the **lower** one (`UPLO='L'`). On a symmetric
# matrix the two agree. On a matrix that is only approximately symmetric, or whose upper
# triangle alone holds the data, the results differ. The faithful spelling of the old default
# is therefore `UPLO="U"`. Both functions return the eigenvalues in ascending order.
#
# ## The fix
# `torch.linalg.eigh(A, UPLO="U")` returns `(eigenvalues, eigenvectors)` like the old call with
# `eigenvectors=True`, with the same triangle. `torch.linalg.eigvalsh(A, UPLO="U")` is the
# replacement for `eigenvectors=False`. Both exist from 1.8, so one spelling serves every
# release from 1.13.1 to 2.15.0, without a guard.
#
# The check does not depend on eigenvector signs, which any solver may flip. It compares the
# eigenvalues with 1, 3 and 5, worked out by hand from the matrix (the 2×2 block has
# eigenvalues 2 ± 1, the last diagonal entry is 5). It then rebuilds the matrix as V diag(L) Vᵀ.


# %%
def fixed(device):
    a = torch.tensor(A, device=device)
    return tuple(torch.linalg.eigh(a, UPLO="U"))  # symeig's default triangle was the upper one


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Downstream, the removal stopped aiqm/torchani (its PR #627, "Fixed: symeig deprication",
# March 2023, moves to `torch.linalg.eigh`) and f-dangel/vivit (its PR #34, July 2023:
# "`symeig` no longer works with `torch>=2.0.0`. `torch.linalg.eigh` is its replacement").
# Upstream:
# - pytorch/pytorch#57732 "Deprecate symeig" (May 2021, in 1.9) added the
#   `TORCH_WARN_ONCE` that 1.13.1 still prints (`aten/src/ATen/native/BatchLinearAlgebra.cpp`
#   on the 1.13.1 branch).
# - pytorch/pytorch#70988 "Remove deprecated torch.symeig" (IvanYashchuk, one of the
#   removals split out of #69857) landed after its XLA counterpart, pytorch/xla#4498, was
#   merged in January 2023.
# - The torch 2.0.1 wheel binds `torch.symeig` to `torch._linalg_utils._symeig`, which raises
#   the `RuntimeError`.
#
# Four sibling functions are not cases of their own for this matrix: `torch.eig`,
# `torch.lstsq`, `torch.solve` and `torch.matrix_rank` were removed one release earlier. The
# 1.13.1 wheel's `_linalg_utils.py` already raises the same "now removed" error for them, so no
# release in the matrix runs them quietly.
#
# The 2.0 boundary comes from torch's history (the stub first appears in the 2.0 wheels). The
# 1.9 start of the warning phase comes from #57732 and cannot be observed here. On this machine
# only torch 2.13.0 was run: `broken` raised the `RuntimeError` (its message names
# `torch.linalg.eigh(A, UPLO='U' if upper else 'L')`), and `fixed` returned eigenvalues 1, 3 and
# 5 with no warning. The other releases are left to the version matrix.

# %% [markdown]
# ## How the harness checks it
# The near miss is `torch.eig`, removed one release earlier (1.13) with the same opening
# sentence: "This function was deprecated since version 1.9 and is now removed". It is the same
# exception type, and it points to `torch.linalg.eig`/`eigvals`, not `eigh`. So the symptom
# requires both the removal sentence and the name `linalg.eigh`, and refuses the `torch.eig`
# error. On 1.13 the symptom is the deprecation warning on a call that still returned.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """2.0 on: calling torch.symeig raises the removal error pointing to linalg.eigh; 1.9-1.13:
    the call works and warns that symeig is deprecated in favour of linalg.eigh."""
    if run.raised(RuntimeError, r"deprecated since version 1\.9 and is now removed") and run.raised(
        RuntimeError, r"linalg\.eigh\b"
    ):
        return "RuntimeError"
    if run.error is None and run.warned(UserWarning, r"torch\.symeig is deprecated in favor of torch\.linalg\.eigh"):
        return "UserWarning"
    return False


def near_miss(device):
    a = torch.tensor(A, device=device)
    return torch.eig(a, eigenvectors=True)  # removed in 1.13: the same sentence, another function


def check(run, device):
    """The eigenvalues are 1, 3 and 5 (worked out by hand), V diag(L) V^T rebuilds the matrix, and
    the call did not warn (1.13's symeig gives the same numbers; its warning is what tells it
    apart)."""
    assert run.error is None, f"raised {run.error!r}"
    evals, evecs = run.value
    torch.testing.assert_close(evals, torch.tensor([1.0, 3.0, 5.0], device=device))
    rebuilt = evecs @ torch.diag(evals) @ evecs.T
    torch.testing.assert_close(rebuilt, torch.tensor(A, device=device), atol=1e-5, rtol=1e-5)
    assert not run.warnings, f"the call warned: {run.warnings[0].message}"


CASE = Case(
    id="symeig-removed",
    title="torch.symeig is gone from 2.0",
    kind="error",
    symptom_category="error",
    symptom_line="torch.symeig raises on 2.0: deprecated since version 1.9 and is now removed.",
    affects=(
        Affects(
            ">=2.0",
            form="RuntimeError",
            reason="torch.symeig is a stub that raises 'deprecated since version 1.9 and is now removed' "
            "(from 2.0, by torch's history)",
            issue="https://github.com/pytorch/pytorch/pull/70988",
        ),
        Affects(
            ">=1.9,<2.0",
            form="UserWarning",
            reason="the call works and warns once per process that symeig is deprecated in favour of linalg.eigh",
            issue="https://github.com/pytorch/pytorch/pull/57732",
            since="pytorch/pytorch#57732 'Deprecate symeig' (May 2021, in 1.9) added the TORCH_WARN_ONCE; "
            "the 1.13.1 branch still has it in aten/src/ATen/native/BatchLinearAlgebra.cpp",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#70988: Remove deprecated torch.symeig",
            url="https://github.com/pytorch/pytorch/pull/70988",
        ),
    ),
    tags=("upgrade", "linalg", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/57732",  # 1.9: deprecation warning
        "https://github.com/pytorch/pytorch/pull/70988",  # 2.0: removed, the name kept as an erroring stub
        "https://github.com/pytorch/pytorch/pull/69857",  # the removals of the deprecated linalg functions
        "https://github.com/pytorch/xla/pull/4498",  # XLA side of the removal (January 2023)
        "https://github.com/aiqm/torchani/pull/627",  # downstream: symeig -> linalg.eigh
        "https://github.com/f-dangel/vivit/pull/34",  # downstream: "symeig no longer works with torch>=2.0.0"
    ),
)
