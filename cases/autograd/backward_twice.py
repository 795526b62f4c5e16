# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Backward through a graph that was already freed
#
# Two losses share part of a network — a GAN's generator output feeds both the discriminator
# loss and the generator loss, an auxiliary head shares a backbone. You call `.backward()` on
# the first, then on the second, and the second call stops with `RuntimeError: Trying to
# backward through the graph a second time (or directly access saved tensors after they have
# already been freed)`. The same happens when one loss is back-propagated twice, as in a loop
# that reuses a value computed once before it.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# `y = x * x` is shared by two losses, `d = sum(y)` and `e = sum(3 * y)`, the shape of the
# example in S2. Back-propagate `d`, then `e`.


# %%
def broken(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * x  # the shared part: its backward needs the saved x
    d = y.sum()
    e = (3 * y).sum()
    d.backward()  # frees what y's node saved
    e.backward()  # walks through y's node again
    return x.grad


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# During the forward pass each operation saves what its derivative will need: `x * x` keeps
# both operands, because d(a·b) = b·da + a·db. To keep memory low, `backward()` frees these
# saved tensors as soon as it has used them, unless told otherwise. A later backward that
# reaches the same node finds nothing to compute with and raises. The graph's structure is
# still there, only its saved values are gone — so the error depends on the ops: a node that
# saved nothing (the backward of `x.sum()` or `x + 1` needs no values) can be run again, and
# `loss = x.sum(); loss.backward(); loss.backward()` quietly accumulates twice instead of
# failing (#21533 states the intent: functions without saved tensors stay callable again, for
# backward compatibility).
#
# ## The fix
# Keep the saved tensors through the first call with `retain_graph=True`, then let the last
# backward free them. When the losses are always used together, summing them and calling
# backward once does the same work in one pass, without keeping the graph alive. Either way
# the gradients add up: d(d)/dx = 2x and d(e)/dx = 6x, so `x.grad` is 8x.


# %%
def fixed(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = x * x
    d = y.sum()
    e = (3 * y).sum()
    d.backward(retain_graph=True)  # keep y's saved tensors for the next call
    e.backward()  # the last one may free them

    x2 = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y2 = x2 * x2
    (y2.sum() + (3 * y2).sum()).backward()  # one backward through the shared part
    return x.grad, x2.grad


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, in their autograd section, remark that backward can be repeated only with
# `retain_graph=True`. S2 ("pitfalls met with PyTorch", section on `retain_graph`) builds a
# small graph with two end nodes, `d` and `e`, over a shared part: back-propagating from `d`
# frees the graph, so back-propagating from `e` afterwards fails, and the post names GAN
# training with several losses as the place where this is met and where keeping the graph helps.
#
# Upstream the error is as old as autograd's buffer freeing: #1288 (April 2017) starts from
# "usually calling backwards twice gives this message" (then asking for `retain_variables=True`,
# the argument's name before `retain_graph`), and #1648 moved the check for released buffers
# into `SavedVariable::unpack()`. The message gained "(or directly access saved tensors after
# they have already been freed)" later; its key words are the same on 2.13.0, observed here.
# #21533 (2019) extended the check to functions that save a list of tensors, and says that
# functions saving none are left callable again on purpose. The `Tensor.backward` docs describe
# `retain_graph`; the 1.9 page adds that setting it is needed in almost no case and can often be
# replaced by something more efficient — such as the single backward above.

# %% [markdown]
# ## How the harness checks it
#
# Another `RuntimeError` meets people in the same GAN loops and is often taken for this one: a
# tensor that backward needs was changed in place after the forward (here `y.mul_(2)` on the
# output of `sigmoid`, whose backward reads that output). The graph is intact; a saved value
# was overwritten, and `retain_graph=True` does not help.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1, S2


def symptom(run):
    """The second backward raises RuntimeError saying it went through the graph a second time."""
    return run.raised(RuntimeError, r"second time")


def near_miss(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    y = torch.sigmoid(x)  # saves its output for backward
    y.mul_(2)  # ... which is then modified in place
    y.sum().backward()
    return x.grad


def check(run, device):
    """Both ways give d(sum(x²) + sum(3x²))/dx = 2x + 6x = 8x, written out for x = [1, 2, 3]."""
    by_hand = torch.tensor([8.0, 16.0, 24.0], device=device)
    retained, summed = run.value
    torch.testing.assert_close(retained, by_hand)
    torch.testing.assert_close(summed, by_hand)


CASE = Case(
    id="backward-twice",
    title="Backward through a graph that was already freed",
    kind="error",
    symptom_category="error",
    symptom_line="A second backward raises: Trying to backward through the graph a second time.",
    # Autograd has freed saved tensors after backward since the first releases, so no lower
    # bound: #1288 (April 2017) quotes the error as the usual answer to a second backward, then
    # worded "through the graph second time ... retain_variables=True". Observed on 2.13.0 by
    # this corpus (the wording changed, the key words did not). Upper end open.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section 'Autograd': retain_graph=True is needed to call backward repeatedly"),
        S2.at("section 'retain_graph': after backward from d, backward from e fails without it"),
    ),
    tags=("autograd", "retain_graph"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.backward.html",  # retain_graph
        "https://pytorch.org/docs/1.9.0/generated/torch.Tensor.backward.html",  # "not needed" note
        "https://github.com/pytorch/pytorch/issues/1288",  # the error as the usual answer, 2017
        "https://github.com/pytorch/pytorch/pull/1648",  # check for released buffers on unpack
        "https://github.com/pytorch/pytorch/pull/21533",  # saved-tensor lists; no saved tensors: callable
    ),
)
