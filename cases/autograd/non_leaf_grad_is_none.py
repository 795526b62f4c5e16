# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `.grad` of an intermediate tensor is `None`
#
# You want to see the gradient flowing into a hidden activation, so you keep a reference to it,
# call `loss.backward()` and print `hidden.grad`. It is `None` — although `hidden.requires_grad`
# is `True` and the input's `.grad` is filled in. Recent releases add a `UserWarning`: "The .grad
# attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be
# populated during autograd.backward()". Older ones said nothing at all.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# `hidden = 2 * x` is computed from a leaf that requires grad, so it requires grad too, but it
# is not a leaf: autograd made it. After `loss.backward()` the variant returns `hidden.grad`.


# %%
def broken(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    hidden = 2 * x  # an intermediate result: requires_grad=True, is_leaf=False
    loss = (hidden**2).sum()
    loss.backward()
    return hidden.grad  # None, and a UserWarning on access


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# `backward()` computes the gradient with respect to every tensor on the way, but it only
# *stores* the ones for leaves — tensors that the user created with `requires_grad=True` (and
# parameters). The gradient reaching an intermediate is handed to the next node and then
# dropped, which saves one tensor of memory per intermediate in a large network. The tensor still
# has a `.grad` attribute, so reading it is not an error: it simply stays `None`. The same
# happens, less visibly, when the "leaf" is not one: `torch.randn(3, requires_grad=True).cuda()`
# or `w.view(...)` return a new non-leaf, and its `.grad` stays empty while the real leaf's fills
# up (#2362, #19778). Since #30531, reading `.grad` on a non-leaf that requires grad and does not
# retain it warns; the value has not changed.
#
# ## The fix
# Ask for the gradient before backward: `hidden.retain_grad()` makes autograd store it in
# `hidden.grad`. To look at it without keeping it, register a hook,
# `hidden.register_hook(fn)`, which receives the gradient as it passes. Here
# loss = Σ hidden², so d(loss)/d(hidden) = 2·hidden = [4, 8, 12].


# %%
def fixed(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    hidden = 2 * x
    hidden.retain_grad()  # before backward
    seen = []
    hidden.register_hook(seen.append)  # the same gradient, seen in passing
    loss = (hidden**2).sum()
    loss.backward()
    return hidden.grad, seen[0]


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The S1 notes, in their autograd section, say that by default only leaf Variables keep a
# gradient: intermediate results are not stored, nothing reports an error, `requires_grad` is
# `True` and `.grad` is `None`; calling `retain_grad()` on the tensor before backward solves it.
# Their hooks section adds that a tensor hook receives exactly this gradient, which is otherwise
# freed.
#
# Upstream, the answer in #2677 (September 2017) is that intermediate gradients are not kept, to
# save memory. #2362 (2017) asked for a warning when someone reads a `.grad` that will never be
# computed, and #19778 (2019) was the same confusion after a `view`; #30531 ("Add useful warnings
# for t.grad when it won't be populated for known reasons") fixed both by warning only for tensors
# that require grad, are not leaves and do not retain their gradient — so a frozen model's tensors
# stay quiet. The warning's text still points to that pull request on 2.13.0, observed here.

# %% [markdown]
# ## How the harness checks it
#
# A `None` gradient next to a `UserWarning` can be another bug. Here the intermediate was built
# with `torch.tensor(2 * x)`, which copies the values out of the graph: `hidden` is a leaf that
# does not require grad, so it gets no gradient, `retain_grad()` would refuse it, and the warning
# is about that copy.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S1


def symptom(run):
    """The intermediate's .grad is None, and reading it raised a UserWarning naming the non-leaf."""
    return run.error is None and run.value is None and run.warned(UserWarning, r"not a leaf")


def near_miss(device):
    x = torch.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True)
    hidden = torch.tensor(2 * x)  # warns: copy-constructing from a tensor; the copy has no history
    loss = (hidden**2).sum() + x.sum()
    loss.backward()
    return hidden.grad  # None: nothing asked for it


def check(run, device):
    """Both the retained .grad and the hooked gradient are 2 * hidden = [4, 8, 12] for hidden =
    [2, 4, 6], written out by hand (a None, as the broken code returns, fails)."""
    assert run.value is not None, "hidden.grad is None"
    retained, hooked = run.value
    by_hand = torch.tensor([4.0, 8.0, 12.0], device=device)
    torch.testing.assert_close(retained, by_hand)
    torch.testing.assert_close(hooked, by_hand)


CASE = Case(
    id="non-leaf-grad-is-none",
    title=".grad of an intermediate tensor is None",
    kind="warning",
    symptom_category="warning",
    symptom_line="hidden.grad is None after backward; recent torch warns about a non-leaf tensor.",
    # `.grad` of a non-leaf has been None by design since the first releases (#2677, 2017); the
    # warning was added by #30531 (opened November 2019, reviewed December 2019). 1.5.0 (April
    # 2020) is the first release certainly after it; whether 1.4.0 (January 2020) carries it was
    # not checked. Observed on 2.13.0 by this corpus; upper end open.
    affects=(
        Affects(
            ">=1.5",
            since="the warning was added by pytorch/pytorch#30531 (December 2019); 1.5.0 "
            "(April 2020) is the first release certainly after it",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(S1.at("section 'Autograd': only leaf Variables keep .grad; retain_grad() before backward"),),
    tags=("autograd", "retain_grad", "leaf"),
    references=(
        "https://github.com/pytorch/pytorch/pull/30531",  # adds the UserWarning
        "https://github.com/pytorch/pytorch/issues/2362",  # asks for that warning (2017)
        "https://github.com/pytorch/pytorch/issues/19778",  # grad is None after a view
        "https://github.com/pytorch/pytorch/issues/2677",  # "intermediate gradients are not stored"
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.retain_grad.html",
    ),
)
