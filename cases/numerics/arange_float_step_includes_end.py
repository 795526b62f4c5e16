# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `torch.arange` with a float step can include its end
#
# You sweep a decision threshold over 0.5, 0.6 and 0.7 with
# `torch.arange(0.5, 0.8, 0.1)`, since `arange` stops before its end. The report comes out with
# four rows, the last one for 0.8. With a step like 0.1, which binary floating point cannot
# represent exactly, the number of elements `arange` computes can round up by one, and the
# "excluded" end appears in the result.

# %%
import math

import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The thresholds of an evaluation sweep, built with a float step.

# %%
START, END, STEP = 0.5, 0.8, 0.1  # meant: 0.5, 0.6, 0.7


def broken(device):
    thresholds = torch.arange(START, END, STEP, device=device)
    return {"end": END, "thresholds": thresholds}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `arange` decides how many elements to produce before producing any:
# `ceil((end - start) / step)`, in double precision. Neither 0.8, 0.5 nor 0.1 is exact in
# binary, and `0.8 - 0.5` comes out as 0.30000000000000004; divided by 0.1 that is
# 3.0000000000000004, whose ceiling is 4. The fourth element is `0.5 + 3 * 0.1`, which is 0.8
# up to rounding: the end the documentation says is excluded. Whether a given
# `(start, end, step)` triggers it depends on how the three round, so the same code gives the
# expected length for some ranges and one extra element for others (`arange(0.5, 0.7, 0.1)`
# has the expected 2). NumPy's `arange` computes the length the same way and behaves the same.
#
# ## The fix
# Count with integers and scale: decide the number of values `n` (here 3, a count you know)
# and build `START + STEP * torch.arange(n)`, or use `torch.linspace(0.5, 0.7, 3)`, which takes
# the count and both ends. If `arange` with a float step must stay, the documentation advises
# subtracting a small epsilon from `end`.


# %%
def fixed(device):
    count = round((END - START) / STEP)  # 3: an integer decided once, not by rounding in arange
    thresholds = START + STEP * torch.arange(count, device=device)
    return {"end": END, "thresholds": thresholds}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# pytorch/pytorch#5556 ("arange(0.1, 0.5, 0.05) returns wrong results") and #5704 reported
# lengths that disagreed with expectations; pytorch/pytorch#5600 made the length computation
# match NumPy's, and #5708 added a note on floating-point rounding to the `torch.arange`
# documentation. In the #5704 discussion a maintainer explains that rounding makes it impossible
# for a float `arange` to do what is expected for every input, and the reporter is pointed to an
# integer `arange` divided down instead. The note's advice was
# corrected in pytorch/pytorch#99853 / #99963: to keep the end excluded, subtract the epsilon
# rather than add it. The documented rounding has been the behaviour since 2018.

# %% [markdown]
# ## How the harness checks it
# The symptom is an element equal to the end that `arange` should exclude. A range that is
# simply shorter than intended because the end is exclusive by design
# (`torch.arange(0.5, 0.7, 0.1)` when 0.7 was wanted too) is a misreading of the API, not this
# rounding, and the symptom refuses it: its last element, 0.6, is below the end.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The last threshold equals the end (to float32 precision): the excluded end is there,
    one element more than the intended `round((end - start) / step)`."""
    if run.error is not None:
        return False
    values = run.value["thresholds"].cpu().double()
    end = run.value["end"]
    intended = round((end - START) / STEP)
    return len(values) == intended + 1 and math.isclose(values[-1].item(), end, abs_tol=1e-6)


def near_miss(device):
    end = 0.7  # the user wanted 0.5, 0.6 and 0.7, but 0.7 is the exclusive end
    return {"end": end, "thresholds": torch.arange(START, end, STEP, device=device)}


def check(run, device):
    """Exactly the three thresholds written out by hand: 0.5, 0.6, 0.7."""
    torch.testing.assert_close(run.value["thresholds"].cpu().float(), torch.tensor([0.5, 0.6, 0.7]))


CASE = Case(
    id="arange-float-step-includes-end",
    title="torch.arange with a float step can include its end",
    kind="silent",
    symptom_category="wrong-shape",
    symptom_line="torch.arange(0.5, 0.8, 0.1) returns four values, the last one the excluded end 0.8.",
    # The length rule ceil((end - start) / step) in double precision, NumPy's, since pytorch#5600
    # (2018). The matrix checks it from 1.13.1 on.
    affects=(Affects("*", reason="the length is computed as ceil((end - start) / step) in floating point"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#5556: arange(0.1, 0.5, 0.05) returns wrong results",
            url="https://github.com/pytorch/pytorch/issues/5556",
        ),
        Source(
            title="pytorch/pytorch#5704: torch.arange cannot create torch.FloatTensor of size 13",
            url="https://github.com/pytorch/pytorch/issues/5704",
        ),
        Source(
            title="pytorch/pytorch#99853: [torch.arange] Small epsilon should be subtracted from end, not added to end",
            url="https://github.com/pytorch/pytorch/issues/99853",
        ),
        Source(
            title="PyTorch docs: torch.arange (note on non-integer steps)",
            url="https://pytorch.org/docs/stable/generated/torch.arange.html",
        ),
    ),
    tags=("numerics", "floating_point", "arange", "evaluation"),
    references=(
        "https://github.com/pytorch/pytorch/pull/5600",  # make torch.arange consistent with numpy.arange
        "https://github.com/pytorch/pytorch/pull/5708",  # explain the floating point issue in the docs
        "https://github.com/pytorch/pytorch/pull/99963",  # docs: subtract the epsilon
        "https://numpy.org/doc/stable/reference/generated/numpy.arange.html",
    ),
)
