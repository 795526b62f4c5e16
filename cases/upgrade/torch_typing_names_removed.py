# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `typing` names such as `Any` and `Callable` are no longer importable from `torch` from 2.5
#
# A module of training utilities starts with `from torch import Any, Callable`. An IDE
# suggested that import, and it worked, because torch's own `__init__.py` imported those names
# from `typing` at module level. Other code writes `ctx: torch.Any` in a custom autograd
# function. After the upgrade to 2.5 the first form stops at import with `ImportError: cannot
# import name 'Any' from 'torch'`, and the second at class definition with `AttributeError:
# module 'torch' has no attribute 'Any'`. Nothing in the user's logic changed. The names were
# never part of torch's API, and torch renamed its private copies.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# A helper that applies a callback to a tensor, annotated with `typing` names taken from
# `torch`. `Any` and `Callable` are the two that every release from 1.13.1 to 2.4 exposes.
# `torch.Tuple`, as in hpcaitech/Open-Sora#839, exists only in some 2.x releases. It is missing
# from the 1.13.1 and 2.0.1 import lists, so it could not serve as the old code here.

# %%
X = [1.0, -2.0, 3.0, -0.5]


def broken(device):
    from torch import Any, Callable  # typing's names, reached through torch

    def apply_hook(hook: Callable[[torch.Tensor], Any], x: torch.Tensor) -> Any:
        return hook(x)

    return apply_hook(torch.relu, torch.tensor(X, device=device))


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Up to 2.4, `torch/__init__.py` started with a plain `from typing import Any, Callable, ...`
# (1.13.1: `Set, Type, TYPE_CHECKING, Union, Callable, Any`; 2.3 and 2.4 also `Dict, Optional,
# Tuple, List`). Every name a module imports becomes one of its attributes, so `torch.Any` was
# `typing.Any` by accident.
#
# In 2.5 the import became `from typing import Any as _Any, Callable as _Callable, ...`. The
# names are private now. The likely source is pytorch/pytorch#129001 ("[BE] update type
# annotations for basic utilities in `torch/__init__.py`", June 2024), whose review asked to
# import `typing.Type as _Type`, because torch's own `torch._C.Type` (the TorchScript type
# class) shadows `typing.Type` there. Only `TYPE_CHECKING` kept its name.
#
# That shadowing is a trap of its own: `torch.Type` still exists on 2.13. It is the TorchScript
# class, not `typing.Type`.
#
# An annotation such as `ctx: torch.Any` is evaluated when the function is defined (Python
# 3.13 and older), so the `AttributeError` comes at import of the user's module, far from any
# tensor code.
#
# ## The fix
# Import typing names from `typing`: `from typing import Any, Callable`. This works with every
# torch, and nothing about it is specific to a release. The check compares with ReLU worked
# out by hand: negative entries become 0, the others stay.


# %%
def fixed(device):
    from typing import Any, Callable

    def apply_hook(hook: Callable[[torch.Tensor], Any], x: torch.Tensor) -> Any:
        return hook(x)

    return apply_hook(torch.relu, torch.tensor(X, device=device))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# Vahe1994/AQLM#136 ("AttributeError: module 'torch' has no attribute 'Any'", torch 2.5.0):
# AQLM annotated its autograd contexts as `torch.Any`. The reply was to stay on torch 2.4.0
# until the fix, AQLM#139 ("Use `typing.Any` instead. `torch.Any` fails with torch 2.5").
# huggingface/peft#2187 skipped its AQLM test on torch 2.5 for the same error.
# hpcaitech/Open-Sora#839 ("Import Tuple from typing instead of torch") is the import form of
# the same thing.
#
# The release comes from torch's files. The 2.4.0 wheel's `torch/__init__.py` still has the
# plain import (line 42). The 2.5.0 wheel's has the `as _Any` form (lines 24–36). A review
# thread of pytorch/pytorch#129136 (2024-06-26) already shows the renamed import on main.
# #129001 is the likely change, but its merge commit was not seen here.
#
# Observed here on torch 2.13.0 only: `broken` raised the `ImportError`, `fixed` returned
# `[1, 0, 3, 0]`. The other releases are left to the version matrix.

# %% [markdown]
# ## How the harness checks it
# An `ImportError` from `from torch import ...` after an upgrade is not always this. The near
# miss imports a misspelt torch name (`Tenser`). It fails the same way on every release, and it
# is a typo, not a `typing` name that used to be reachable. So the symptom asks for the
# `ImportError` and for one of `typing`'s names in its message.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source

TYPING_NAMES = r"(Any|Callable|Dict|List|Optional|Set|Tuple|Union)"


def symptom(run):
    """From 2.5: importing one of typing's names from torch fails, because torch now keeps its
    copies private."""
    return run.raised(ImportError, rf"cannot import name '{TYPING_NAMES}' from 'torch'")


def near_miss(device):
    from torch import Tenser  # noqa: F401  (a typo, on every release)


def check(run, device):
    """ReLU of the input worked out by hand: the negative entries become 0."""
    assert run.error is None, f"raised {run.error!r}"
    expected = torch.tensor([max(v, 0.0) for v in X], device=device)
    torch.testing.assert_close(run.value, expected)
    assert not run.warnings, f"warned: {run.warnings[0].message}"


CASE = Case(
    id="torch-typing-names-removed",
    title="typing names such as Any and Callable are no longer importable from torch from 2.5",
    kind="error",
    symptom_category="error",
    symptom_line="from torch import Any fails on 2.5: cannot import name 'Any' from 'torch'.",
    affects=(
        Affects(
            ">=2.5",
            reason="torch/__init__.py imports typing's names under private aliases (Any as _Any, ...); "
            "the 2.4.0 wheel still imports them plainly",
            issue="https://github.com/pytorch/pytorch/pull/129001",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/pytorch#129001: [BE] update type annotations for basic utilities in torch/__init__.py",
            url="https://github.com/pytorch/pytorch/pull/129001",
        ),
    ),
    tags=("upgrade", "typing", "import", "removal"),
    references=(
        "https://github.com/pytorch/pytorch/pull/129001",  # likely source of the private aliases (2.5)
        "https://github.com/pytorch/pytorch/pull/129136",  # its review shows the renamed import on main, June 2024
        "https://github.com/Vahe1994/AQLM/issues/136",  # downstream: module 'torch' has no attribute 'Any'
        "https://github.com/Vahe1994/AQLM/pull/139",  # downstream fix: typing.Any
        "https://github.com/huggingface/peft/pull/2187",  # downstream: AQLM test skipped on torch 2.5
        "https://github.com/hpcaitech/Open-Sora/pull/839",  # downstream: Tuple imported from typing, not torch
    ),
)
