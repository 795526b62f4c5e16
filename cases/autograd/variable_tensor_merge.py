# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `Variable` and `Tensor` were two classes that would not mix (torch ≤ 0.3)
#
# On torch 0.3 a loss written with plain tensors had to be wrapped in
# `torch.autograd.Variable` before `.backward()` could run. Wrap the network's output, keep a
# constant map as a plain tensor, combine the two, and the call failed: an operation took
# either Variables or Tensors, never one of each (upstream reports quote errors such as
# `TypeError: torch.mm received an invalid combination of arguments - got (torch.FloatTensor,
# Variable)`). The two classes also disagreed on parts of their API, so helper code grew
# `isinstance(x, Variable)` checks and `.data` unwrapping everywhere. Since 0.4 there is one
# class: `Variable(t)` still runs, but it returns a plain `torch.Tensor`, and the old wrapping
# is at best noise — at worst it cuts the graph.

# %%
import torch
from torch.autograd import Variable

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# The post's last step, in miniature: wrap the prediction as a `Variable` that requires grad,
# multiply it by a constant weight map that stays a plain tensor, and back-propagate. On 0.3
# combining the two raised (S0). Today it runs, so the variant records what 0.3 got wrong: the class
# that `Variable(...)` returns, whether a tensor counts as a `Variable`, and whether `.type()`
# agrees between the two. It also records what re-wrapping does today (see *Why*).


# %%
def broken(device):
    prob = torch.tensor([0.2, 0.7, 0.1], device=device)  # the network's output
    weight = torch.tensor([1.0, 2.0, 3.0], device=device)  # a constant map, never wrapped
    prob_var = Variable(prob, requires_grad=True)  # the 0.3 way to ask for a gradient
    loss = (prob_var * weight).sum()  # 0.3: Variable times Tensor raised here
    loss.backward()
    rewrapped = Variable(prob_var)  # wrapping once more, "to be safe"
    return {
        "class of Variable(t)": type(prob_var),
        "tensor is a Variable": isinstance(prob, Variable),
        "same .type()": prob_var.type() == prob.type(),
        "grad": prob_var.grad,
        "re-wrapped requires_grad": rewrapped.requires_grad,
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# Up to 0.3, `torch.FloatTensor` and friends were plain data containers and autograd lived in a
# wrapper, `Variable`, holding a tensor in `.data` plus `requires_grad`, `grad` and `grad_fn`.
# Each operation had a tensor implementation and a Variable implementation, and the argument
# parser picked one by the classes it was given, so a Variable next to a Tensor matched neither
# (#1252: "a function takes either Tensors or Variables as input but not a mix of them"). The
# two classes had diverging methods, which is why the post had to test for `Variable` and
# unwrap `.data` in its helpers.
#
# PyTorch 0.4.0 merged them: `torch.Tensor` tracks history itself, `requires_grad` is a tensor
# attribute, and `Variable` survives only for compatibility. `isinstance(t, Variable)` is now
# true for every tensor, and `Variable(t, requires_grad=...)` is implemented as
# `t.detach()` followed by setting `requires_grad` — a *new leaf* that shares `t`'s memory.
# That is the live trap the S1 notes warn about: `Variable(x)` on a tensor that is already part
# of a graph returns a tensor with `requires_grad=False` and `grad=None`, cut off from `x`, so
# nothing computed from it reaches `x.grad` (the broken variant records `False` above).
#
# ## The fix
# Drop the wrapper. Create the tensor with `requires_grad=True` (or call `.requires_grad_()` on
# an existing leaf), mix it freely with constant tensors, and use `.detach()` when a copy
# outside the graph is what you mean. The gradient of `sum(p * w)` with respect to `p` is `w`.


# %%
def fixed(device):
    prob = torch.tensor([0.2, 0.7, 0.1], device=device, requires_grad=True)
    weight = torch.tensor([1.0, 2.0, 3.0], device=device)
    loss = (prob * weight).sum()
    loss.backward()
    return {"grad": prob.grad}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S0, torch 0.3, December 2017) built a segmentation loss from tensors and, at
# the last step, wrapped the probability map with `Variable(prob)` to test back-propagation:
# the call failed because a Variable could not be combined with a Tensor, and because the two
# disagreed on methods such as `.type`, the author converted everything to Variables and
# unwrapped `.data` in the helpers. The S1 notes (2020) record the other side: after 0.4.0 every
# tensor is a Variable, so `Variable(torch.tensor(3))` should not be written, and wrapping can
# even reset a tensor's gradient.
#
# Upstream, #1252 (April 2017) and #4828 (January 2018) are the mixing errors; the answer to the
# second was that Variables would soon be merged with tensors. The merge landed on master in early
# 2018 (#5225, "Merge Variable and Tensor classes"); #6646 shows the difference between
# 0.3.1.post2 and a 0.4.0 pre-release, where `Variable(t)` already printed as a plain tensor. The
# v0.4.0 release notes list "Tensor / Variable merged" first among the breaking changes, and the
# migration guide says that `Variable` wrapping still works but returns a `torch.Tensor`. The case
# is *historical*: `affects` is `<0.4`, below every installable torch. The broken code now
# computes the same gradient as the fix, so nothing here can tell them apart and the case runs as
# `unverified`; its symptom still guards today's behaviour (a Variable that is again a class apart
# would show as a mismatch).

# %% [markdown]
# ## How the harness checks it
#
# Today's pair of array types that will not mix is a tensor and a NumPy array: `torch.mm` refuses
# the array with a `TypeError` too. That is not the Variable/Tensor split, and no `Variable`
# wrapping helps; `torch.from_numpy` does.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S0, S1


def symptom(run):
    """The ≤0.3 behaviour: mixing the two raised an argument error naming a Variable next to a
    Tensor, or Variable(t) was a class apart from Tensor."""
    if run.error is not None:
        # The two forms the ≤0.3 argument parsers gave a Variable mixed with a Tensor (#1252 and
        # the Practical_NLP report in the references); any other error is another bug.
        return run.raised(TypeError, r"(?s)invalid combination of arguments.*\bVariable\b") or run.raised(
            RuntimeError, r"must be Variable, not torch\.\w*Tensor"
        )
    value = run.value
    if not isinstance(value, dict) or "class of Variable(t)" not in value:
        return False  # code without Variable (the fix): nothing for a Tensor to be apart from
    return (
        value["class of Variable(t)"] is not torch.Tensor
        or not value["tensor is a Variable"]
        or not value["same .type()"]
    )


def near_miss(device):
    import numpy as np

    weight = torch.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    features = np.ones((2, 2), dtype=np.float32)  # straight from a data pipeline
    return torch.mm(weight, features)


def check(run, device):
    """The gradient of sum(p * w) with respect to p is w = [1, 2, 3], written out by hand.
    Today the broken code gets it right too: only torch ≤ 0.3 could tell the two apart."""
    torch.testing.assert_close(run.value["grad"], torch.tensor([1.0, 2.0, 3.0], device=device))


CASE = Case(
    id="variable-tensor-merge",
    title="Variable and Tensor were two classes that would not mix (torch ≤ 0.3)",
    kind="historical",
    symptom_category="error",
    symptom_line="On torch 0.3 an operation refused to mix a Variable and a Tensor.",
    # The split is shown on 0.3 by the source post (December 2017) and by upstream reports
    # (#1252 in April 2017, #4828 in January 2018, #6646 comparing 0.3.1.post2 with a 0.4
    # pre-release). Tensor and Variable were merged for 0.4.0 (release notes, migration guide).
    affects="<0.4",
    devices=("cpu", "cuda"),
    sources=(
        S0.at("the last step: Variable(prob) could not be combined with a Tensor, and '.type' differed"),
        S1.at("section 'Autograd': since 0.4.0 a Tensor is a Variable; Variable(t) may even reset the grad"),
    ),
    tags=("autograd", "variable", "legacy_api"),
    references=(
        "https://github.com/pytorch/pytorch/releases/tag/v0.4.0",  # "Tensor / Variable merged"
        "https://pytorch.org/blog/pytorch-0_4_0-migration-guide/",  # the same, with examples
        "https://github.com/pytorch/pytorch/issues/1252",  # a function takes Tensors or Variables
        "https://github.com/pytorch/pytorch/issues/4828",  # cat(Tensor, Variable): "won't fix", merge coming
        "https://github.com/pytorch/pytorch/issues/6646",  # 0.4 pre-release: Variable(t) is a Tensor
        "https://github.com/pytorch/pytorch/pull/5225",  # "Merge Variable and Tensor classes"
        "https://github.com/keitakurita/Practical_NLP_in_PyTorch/issues/2",  # "must be Variable, not torch.FloatTensor"
    ),
)
