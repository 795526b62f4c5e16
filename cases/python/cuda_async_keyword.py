# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `cuda(async=True)` is a syntax error
#
# You run an older training script, or copy a data-loading loop from a 2017 tutorial, and it
# stops before a single line has executed: `SyntaxError: invalid syntax`, with the caret under
# `async` in `target = target.cuda(async=True)`. Nothing about torch or CUDA is involved yet: the
# file cannot even be parsed, so no `try`, no `import` order and no torch upgrade changes it.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The line as old scripts wrote it. `compile()` does what the interpreter does to a file before
# running it; the case compiles the text and never runs it.

# %%
BROKEN_SOURCE = "target = target.cuda(async=True)\n"


def broken(device):
    # `device` plays no part: the text is rejected before anything runs, on every device.
    return compile(BROKEN_SOURCE, "train.py", "exec")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# PEP 492 (Python 3.5) introduced `async` and `await` as *soft* keywords: the tokenizer treated
# them as keywords only around `async def`, so `async=True` as a keyword argument still parsed.
# Python 3.7 made both proper reserved words (bpo-30406), and a reserved word cannot be the name
# of a keyword argument, so the call is a syntax error in the parser itself. torch saw it
# coming: pytorch/pytorch#3431 asked for a rename, and #4999 (merged February 2018) renamed
# the argument of `.cuda()`, `copy_()` and the other Python-level copies to `non_blocking`.
# On torch 2.13.0, `Tensor.cuda` still lists a deprecated `async` overload (reachable only
# through `**{"async": True}`, with a `UserWarning`), but that does not help source text that
# spells `async=True`.
#
# ## The fix
# Spell it `non_blocking=True`. The same keyword exists on `.to(device, non_blocking=True)`,
# which also works on a machine without a GPU; the fixed text is compiled *and* run.

# %%
FIXED_SOURCE = "target = target.to(device, non_blocking=True)\n"


def fixed(device):
    code = compile(FIXED_SOURCE, "train.py", "exec")  # raises nothing now
    namespace = {"target": torch.tensor([3, 1, 2]), "device": torch.device(device)}
    exec(code, namespace)
    return namespace["target"]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# S1's troubleshooting list notes that `cuda(async=True)` can raise a syntax error, because
# `async` became a reserved word in Python 3.7, and that it should become `non_blocking`.
# Upstream, pytorch/pytorch#3431 (2017) asked to rename the argument before Python 3.7 shipped;
# pytorch/pytorch#4999 did so, keeping `async` as a deprecated alias reachable through `**kwargs`,
# and #12158 updated the docs. The Python change itself is bpo-30406 ("Make async and await
# proper keywords"). The symptom depends on the Python version, not on torch: it shows with
# every torch run on Python >= 3.7, so `affects` has no version bound. Only the CPU run was
# observed by this project; on CUDA the text fails in the same parser before any device exists.

# %% [markdown]
# ## How the harness checks it
#
# Old scripts fail to parse for another reason too: a Python 2 `print` statement is also a
# `SyntaxError` on Python 3, with its caret under `print`. That is not this pitfall, and the
# symptom must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """A SyntaxError whose reported column points at the `async` token."""
    err = run.error
    if not isinstance(err, SyntaxError) or err.text is None or err.offset is None:
        return False
    return err.text[err.offset - 1 :].startswith("async")


def near_miss(device):
    return compile('print "epoch", epoch\n', "train.py", "exec")


def check(run, device):
    """The labels arrived on the requested device unchanged: the same three integers, written
    out by hand."""
    assert run.value.device.type == torch.device(device).type, run.value.device
    torch.testing.assert_close(run.value.cpu(), torch.tensor([3, 1, 2]))


CASE = Case(
    id="cuda-async-keyword",
    title="`cuda(async=True)` is a syntax error",
    kind="error",
    symptom_category="error",
    symptom_line="An old script stops at once with SyntaxError on cuda(async=True).",
    # A Python rule, not a torch one: `async` is a reserved keyword from Python 3.7, so the
    # source fails to compile with every torch (every torch in the matrix needs Python >= 3.7).
    affects=(Affects(reason="Python >= 3.7 rejects the source whatever the torch version"),),
    devices=("cpu", "cuda"),
    sources=(S1.at("troubleshooting list: cuda(async=True) raises a syntax error; use non_blocking"),),
    tags=("python", "syntax", "non_blocking"),
    references=(
        "https://github.com/pytorch/pytorch/issues/3431",  # rename .cuda(async=...) before 3.7
        "https://github.com/pytorch/pytorch/pull/4999",  # async -> non_blocking, Feb 2018
        "https://github.com/pytorch/pytorch/pull/12158",  # docs follow the rename
        "https://www.python.org/pipermail/python-checkins/2017-October/152308.html",  # bpo-30406
    ),
)
