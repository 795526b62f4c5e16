# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Printing hides a difference: four digits by default
#
# You want to know whether two computations agree (a refactored layer against the old one, a
# CPU result against a GPU one), so you print both tensors. The two lines on the screen are
# character for character the same, and you conclude that the results are identical. They are
# not: the values differ in the fifth decimal, and `print` rounds every float to four digits
# after the point before you ever see it.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two results that differ by 3e-5 in one element are compared by their printed form, which
# is what a reader does when looking at two `print` lines.


# %%
def broken(device):
    old = torch.tensor([0.12341, 0.5], device=device)
    new = torch.tensor([0.12344, 0.5], device=device)
    return {
        "printed_old": str(old),
        "printed_new": str(new),
        "equal": torch.equal(old, new),  # what the values say
        "max_abs_diff": (new - old).abs().max().item(),
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A tensor's `repr` is made for reading, not for checking: torch's printer formats every
# floating-point element with a fixed number of digits after the point (the `precision`
# print option, 4 unless you change it), the same way NumPy's printer does. `0.12341` and
# `0.12344` both become `0.1234`, so equal text says nothing about equal values. The
# difference of 3e-5 is far above float32's resolution near 0.12 (about 7e-9): it is a real
# difference that the display rounds away.
#
# ## The fix
# Compare values, not text: `torch.equal` for exact equality, `torch.allclose` or
# `torch.testing.assert_close` with a tolerance you chose, or look at `(a - b).abs().max()`.
# When you do want to read more digits, raise the precision with
# `torch.set_printoptions(precision=8)` and put the old value back afterwards (print options
# are global to the process; torch has no public getter, so the old value is read from
# `torch._tensor_str.PRINT_OPTS`).


# %%
def fixed(device):
    old = torch.tensor([0.12341, 0.5], device=device)
    new = torch.tensor([0.12344, 0.5], device=device)
    equal = torch.equal(old, new)
    max_abs_diff = (new - old).abs().max().item()
    saved = torch._tensor_str.PRINT_OPTS.precision
    torch.set_printoptions(precision=8)
    try:
        printed_old, printed_new = str(old), str(new)
    finally:
        torch.set_printoptions(precision=saved)
    return {"printed_old": printed_old, "printed_new": printed_new, "equal": equal, "max_abs_diff": max_abs_diff}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source notes (S1, in their troubleshooting list) record that torch prints floats with four
# digits after the point and that `torch.set_printoptions(precision=8)` shows more. The
# `torch.set_printoptions` documentation gives `precision` a default of 4 (the 1.10 page and
# today's page say the same). No release is known to have changed the default, so `affects` has no
# bound; the version matrix checks it.

# %% [markdown]
# ## How the harness checks it
#
# Equal printouts and `torch.equal(...) == False` also happen with nothing hidden by rounding:
# a `nan` in both results. NaN is never equal to itself, so the two compare unequal however
# many digits are printed; that is a NaN to chase (or `equal_nan=True`), not a precision to raise.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The two tensors print identically although their values differ by a real, finite amount
    smaller than the last printed digit (1e-4 at four decimals)."""
    if run.error is not None:
        return False
    v = run.value
    return v["printed_old"] == v["printed_new"] and not v["equal"] and 0 < v["max_abs_diff"] < 1e-4


def near_miss(device):
    old = torch.tensor([float("nan"), 0.5], device=device)
    new = torch.tensor([float("nan"), 0.5], device=device)
    return {
        "printed_old": str(old),
        "printed_new": str(new),
        "equal": torch.equal(old, new),  # False: nan != nan
        "max_abs_diff": (new - old).abs().max().item(),  # nan
    }


def check(run, device):
    """The printouts carry the digits written in the source, 0.12341 and 0.12344, and the values
    differ by 0.12344 - 0.12341 = 3e-5, worked out by hand."""
    v = run.value
    assert "0.12341" in v["printed_old"] and "0.12344" in v["printed_new"], "the printout hides the digits"
    assert not v["equal"]
    assert abs(v["max_abs_diff"] - 3e-5) < 1e-7, v["max_abs_diff"]


CASE = Case(
    id="print-precision-hides-difference",
    title="Printing hides a difference: four digits by default",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="Two printed tensors look identical, but their values differ past the fourth digit.",
    # Observed on 2.13.0 by this corpus. The default precision of 4 is documented for the
    # 1.10 docs and today's; no release is known to have changed it, so no bound is set.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section 'Troubleshooting': the default print precision is 4 digits, set_printoptions(precision=8)"),
    ),
    tags=("numerics", "printing", "set_printoptions", "comparison"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.set_printoptions.html",
        "https://pytorch.org/docs/1.10/generated/torch.set_printoptions.html",
    ),
)
