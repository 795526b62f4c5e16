# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A hand-written backward that is wrong and never says so
#
# You write batch normalisation as a `torch.autograd.Function` with your own `backward`, to
# learn how it works or to save memory. The forward matches `nn.BatchNorm2d`, `loss.backward()`
# runs, every gradient has the right shape and is finite, and the model trains — a little
# worse than it should, for reasons nobody can see. Autograd never checks a custom `backward`
# against the forward: the wrong formula is used as if it were right. Only a numerical check,
# `torch.autograd.gradcheck` on float64 inputs, says that the gradient is not the derivative.

# %%
import torch

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Batch norm in training mode over an `N×C×H×W` batch, statistics per channel, with a learnable
# scale and shift. The input gradient below keeps the path through the batch mean but drops
# the path through the batch variance — one missing term, the kind of slip a hand derivation
# makes. One backward in float32 raises nothing and gives finite gradients; `gradcheck` on a
# float64 copy of the same inputs answers `False`. The variant also keeps the float64 gradients
# for one output gradient, which the fix's check below compares with autograd's own.

# %%
DIMS = (0, 2, 3)  # the statistics are taken per channel, over batch and space


def _bn_forward(ctx, x, weight, bias, eps=1e-5):
    mean = x.mean(DIMS, keepdim=True)
    std = (x.var(DIMS, unbiased=False, keepdim=True) + eps).sqrt()
    xhat = (x - mean) / std
    ctx.save_for_backward(xhat, std, weight)
    return xhat * weight.view(1, -1, 1, 1) + bias.view(1, -1, 1, 1)


class BatchNormMissingTerm(torch.autograd.Function):
    forward = staticmethod(_bn_forward)

    @staticmethod
    def backward(ctx, grad_out):
        xhat, std, weight = ctx.saved_tensors
        g = grad_out * weight.view(1, -1, 1, 1)
        grad_x = (g - g.mean(DIMS, keepdim=True)) / std  # the variance term is missing
        return grad_x, (grad_out * xhat).sum(DIMS), grad_out.sum(DIMS)


def _inputs(device, dtype):
    with seeded(0):
        x = torch.randn(4, 2, 3, 3, device=device, dtype=dtype)
        weight = torch.rand(2, device=device, dtype=dtype) + 0.5
        bias = torch.randn(2, device=device, dtype=dtype)
    return [t.requires_grad_() for t in (x, weight, bias)]


def _training_step_looks_fine(batch_norm, device):
    """One float32 loss and backward: are all the gradients finite and of the right shape?"""
    x, weight, bias = _inputs(device, torch.float32)
    with seeded(1):
        target = torch.randn(4, 2, 3, 3, device=device)
    loss = (batch_norm(x, weight, bias) - target).pow(2).mean()
    loss.backward()  # no error, no warning
    return all(t.grad.shape == t.shape and bool(t.grad.isfinite().all()) for t in (x, weight, bias))


def _grads_float64(batch_norm, device):
    """The gradients with respect to (x, weight, bias) for one seeded output gradient, in float64."""
    inputs = _inputs(device, torch.float64)
    with seeded(1):
        grad_out = torch.randn(4, 2, 3, 3, device=device, dtype=torch.float64)
    return torch.autograd.grad(batch_norm(*inputs), inputs, grad_out)


def broken(device):
    batch_norm = BatchNormMissingTerm.apply
    passes = torch.autograd.gradcheck(batch_norm, tuple(_inputs(device, torch.float64)), raise_exception=False)
    return {
        "grads_finite_and_shaped": _training_step_looks_fine(batch_norm, device),
        "gradcheck_float64": passes,
        "grads_float64": _grads_float64(batch_norm, device),
    }


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A custom `Function` is a promise: "this `backward` is the derivative of that `forward`".
# Autograd cannot check it without differentiating the forward itself, which is exactly what
# the custom `backward` replaces; so it calls `backward`, checks only that it returned one
# gradient (or `None`) per input with a usable shape, dtype and device, and goes on. A formula
# that is wrong but well-shaped gives gradients that are merely *different*: here the input
# gradient ignores that moving one element changes the batch variance, so it is off by
# `xhat * mean(g * xhat) / std` — small, finite, and invisible in a loss curve.
#
# `gradcheck` compares the analytical Jacobian (from your `backward`) with a numerical one
# (central differences of your `forward`, step `eps=1e-6`). In float32 the rounding error of
# the forward is about as large as the change such a step makes, so the numerical Jacobian is
# too inaccurate and gradcheck fails (with a `UserWarning` per non-double input) even for the
# correct `backward` below — the source S4 is about exactly that. Run it on float64 inputs,
# where a correct backward passes and a wrong one fails.
#
# ## The fix
# Derive the missing term (the gradient through the variance) and let `gradcheck` in float64
# confirm the formula before the Function is used; then compare with autograd differentiating
# the same computation done by `F.batch_norm`.


# %%
class BatchNormFunction(torch.autograd.Function):
    forward = staticmethod(_bn_forward)

    @staticmethod
    def backward(ctx, grad_out):
        xhat, std, weight = ctx.saved_tensors
        g = grad_out * weight.view(1, -1, 1, 1)
        grad_x = (g - g.mean(DIMS, keepdim=True) - xhat * (g * xhat).mean(DIMS, keepdim=True)) / std
        return grad_x, (grad_out * xhat).sum(DIMS), grad_out.sum(DIMS)


def fixed(device):
    batch_norm = BatchNormFunction.apply
    passes = torch.autograd.gradcheck(batch_norm, tuple(_inputs(device, torch.float64)), raise_exception=False)
    return {
        "grads_finite_and_shaped": _training_step_looks_fine(batch_norm, device),
        "gradcheck_float64": passes,
        "grads_float64": _grads_float64(batch_norm, device),
    }


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The notes (S1), in their section on writing your own modules, implement batch norm as an
# `autograd.Function` with a hand-derived `backward`, leave a debugger breakpoint inside it and
# keep an alternative formula commented out beside the one in use — a derivation being
# debugged by eye. Nothing in autograd would have told them which formula was right; the
# missing variance term used here stands in for such a slip. The gradcheck post (S4) supplies
# the other half: gradcheck is the tool, and it only means something on float64 inputs and a
# float64 function (see the `gradcheck-float32` case).
#
# PyTorch's "Extending PyTorch" notes ask for exactly this: after writing a `Function`, check its
# backward with `gradcheck` on double-precision inputs. The `gradcheck` reference documents the
# comparison (analytical against finite differences, with `eps`, `atol`, `rtol`) and its
# `raise_exception=False` form used above. This is how autograd treats a custom backward by
# design, not a bug with a fix release: `affects` has no lower bound (no release is known to have
# checked a custom backward), and its upper end is open.

# %% [markdown]
# ## How the harness checks it
#
# A hand-made batch norm whose outputs differ from `nn.BatchNorm2d` is not always this pitfall.
# This one divides by the *unbiased* variance (n - 1) where batch norm uses the biased one, and
# has no hand-written backward: autograd differentiates it, so gradcheck passes. The forward is
# wrong; its gradient is the true derivative of what it computes.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S1, S4


def symptom(run):
    """Backward ran and gave plausible gradients, yet they are not the derivative of the forward."""
    if run.error is not None:
        return False
    return run.value["grads_finite_and_shaped"] and run.value["gradcheck_float64"] is False


def _batch_norm_unbiased(x, weight, bias, eps=1e-5):
    mean = x.mean(DIMS, keepdim=True)
    std = (x.var(DIMS, unbiased=True, keepdim=True) + eps).sqrt()  # n - 1: not batch norm's
    return (x - mean) / std * weight.view(1, -1, 1, 1) + bias.view(1, -1, 1, 1)


def near_miss(device):
    batch_norm = _batch_norm_unbiased
    passes = torch.autograd.gradcheck(batch_norm, tuple(_inputs(device, torch.float64)), raise_exception=False)
    return {
        "grads_finite_and_shaped": _training_step_looks_fine(batch_norm, device),
        "gradcheck_float64": passes,
        "grads_float64": _grads_float64(batch_norm, device),
    }


def check(run, device):
    """gradcheck passed in float64, and the gradients equal those autograd itself derives for the
    same forward written with F.batch_norm (no hand-written backward involved)."""
    assert run.value["gradcheck_float64"] is True, "gradcheck in float64 rejects the backward"
    reference = lambda x, weight, bias: torch.nn.functional.batch_norm(  # noqa: E731
        x, None, None, weight, bias, training=True, eps=1e-5
    )
    for got, want in zip(run.value["grads_float64"], _grads_float64(reference, device)):
        torch.testing.assert_close(got, want)


CASE = Case(
    id="custom-function-needs-gradcheck",
    title="A hand-written backward that is wrong and never says so",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A hand-written backward is wrong, the model still trains, and nothing says so.",
    # By design: autograd calls a Function's backward without comparing it to the forward.
    # Observed on 2.13.0 by this corpus; no release is known to have done otherwise, so no
    # lower bound, and none is known to change it (upper end open).
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S1.at("section on custom modules: the author's own batch-norm autograd.Function (MyBN_f)"),
        S4.at("gradcheck needs float64 inputs: float32 gives a Jacobian mismatch even when right"),
    ),
    tags=("autograd", "custom_function", "gradcheck", "batchnorm"),
    references=(
        "https://docs.pytorch.org/docs/stable/notes/extending.html#extending-torch-autograd",
        "https://docs.pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html",
    ),
)
