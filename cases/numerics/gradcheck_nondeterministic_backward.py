# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # gradcheck and a backward that is not bit-for-bit reproducible
#
# Your layer's backward accumulates its gradient the way GPU kernels with atomic adds do: the
# same numbers, added in whatever order the threads arrive. You run
# `torch.autograd.gradcheck` on it, in float64, and it stops with `GradcheckError: Backward is not
# reentrant, i.e., running backward with same input and grad_output multiple times gives
# different values, although analytical gradient matches numerical gradient`. The gradient is
# right to fifteen digits; the last bit changes from one backward call to the next, and
# gradcheck's default tolerance for that is exactly zero. Passing `raise_exception=False`
# turns the error into a quiet `False`, and a bigger `atol` changes nothing.

# %%
import math

import torch
from torch.autograd import gradcheck

from torch_pitfalls import observe

try:
    from torch.autograd.gradcheck import GradcheckError
except ImportError:  # before pytorch/pytorch#55656 (2021): a plain RuntimeError
    GradcheckError = RuntimeError


class ScaleBySum(torch.autograd.Function):
    """`y = x * sum(w)`. Its backward re-adds `w` in an order drawn from `gen`, as a kernel with
    atomic adds accumulates in whatever order its threads finish: the same terms, summed in
    another order, round differently in the last bits."""

    @staticmethod
    def forward(ctx, x, w, gen):
        ctx.save_for_backward(w)
        ctx.gen = gen
        return x * w.sum()

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        order = torch.randperm(w.numel(), generator=ctx.gen, device=w.device)
        total = w[order].cumsum(0)[-1]  # a running sum: the order decides the rounding
        return grad * total, None, None


def layer_and_input(device):
    """64 weights spread over four orders of magnitude (so the order of the additions shows in
    the last bits), an input of 4, and the generator that plays the thread scheduler. All from
    a local generator: the same numbers on every run, no global RNG touched."""
    gen = torch.Generator(device=device).manual_seed(0)
    scale = torch.logspace(-2, 2, 64, dtype=torch.float64, device=device)
    w = torch.randn(64, generator=gen, dtype=torch.float64, device=device) * scale
    x = torch.rand(4, generator=gen, dtype=torch.float64, device=device, requires_grad=True)
    return (lambda inp: ScaleBySum.apply(inp, w, gen)), x, w


# %% [markdown]
# ## The broken code
# The check as one writes it first: float64 input, gradcheck's default settings.


# %%
def broken(device):
    layer, x, _ = layer_and_input(device)
    return gradcheck(layer, (x,))  # raises


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))
    layer, x, _ = layer_and_input("cpu")
    # The source post's way out: no exception, and nothing checked either.
    print("raise_exception=False:", gradcheck(layer, (x,), raise_exception=False))
    # Looser Jacobian tolerances do not touch the reentrancy test at all.
    print(observe(gradcheck, layer, (x,), atol=1e-2, rtol=1e-2))

# %% [markdown]
# ## Why
# gradcheck runs the backward twice for every output element and compares the two analytical
# Jacobians with a tolerance of its own, `nondet_tol`, which defaults to `0.0`: any difference,
# even one unit in the last place, is a failure. The check exists because most backward
# formulas are deterministic, and a backward that is not usually reads memory it should not.
# But floating-point addition is not associative, and kernels that accumulate with atomic adds
# (many CUDA backward passes of indexing, scatter, pooling and interpolation ops, and many
# custom CUDA extensions) add the same terms in a different order on each run. The results
# differ by a few units in the last place, about 1e-15 relative here, far below anything `atol`
# or `rtol` governs. `atol`/`rtol`/`eps` only apply to the comparison with the numerical
# Jacobian, so loosening them does nothing for this test.
#
# The post met it the other way round: its float32 check first failed with a Jacobian
# mismatch, and only after it loosened `atol` did the reentrancy failure show, now and then.
# In its gradcheck the numerical comparison came first; in 2.13 the reentrancy test runs
# first (`_check_analytical_jacobian_attributes` in `torch/autograd/gradcheck.py`), which is why
# the message still says "although analytical gradient matches numerical gradient" even though
# that has not been checked yet. `raise_exception=False` only makes gradcheck return `False`:
# the check still fails, and nobody reads the reason.
#
# ## The fix
# Give gradcheck the backward's real run-to-run spread as `nondet_tol`, measured, not guessed:
# run the backward a number of times on the same input and `grad_output`, take the largest
# difference, and allow twice that (two draws of a distribution can differ a little more than
# twenty samples showed). It stays around 1e-15 relative to the gradient, so a backward that
# is wrong by 0.1% still fails (the near miss above). Where the kernel allows it, the other fix
# is a deterministic backward (accumulate in a fixed order, or
# `torch.use_deterministic_algorithms(True)` for PyTorch's own ops); then the default `0.0`
# passes, as the demo after the fix shows.


# %%
def spread_of_backward(layer, x, runs=20):
    """The largest run-to-run difference of the analytical gradient, over `runs` backward calls
    with the same input and grad_output."""
    grad_out = torch.ones_like(x)
    grads = torch.stack([torch.autograd.grad(layer(x), x, grad_out)[0] for _ in range(runs)])
    return (grads.max(0).values - grads.min(0).values).max().item()


def fixed(device):
    layer, x, _ = layer_and_input(device)
    tol = 2 * spread_of_backward(layer, x)
    ok = gradcheck(layer, (x,), nondet_tol=tol)
    (grad,) = torch.autograd.grad(layer(x).sum(), x)
    return {"gradcheck": ok, "nondet_tol": tol, "grad": grad.detach()}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

    class ScaleBySumOrdered(torch.autograd.Function):
        """The deterministic alternative: always add in the same order."""

        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(w)
            return x * w.sum()

        @staticmethod
        def backward(ctx, grad):
            (w,) = ctx.saved_tensors
            return grad * w.cumsum(0)[-1], None

    _, x, w = layer_and_input("cpu")
    print("deterministic backward, nondet_tol=0:", gradcheck(lambda inp: ScaleBySumOrdered.apply(inp, w), (x,)))

# %% [markdown]
# ## Where it comes from
# The source post (S4) is about gradcheck's "Jacobian mismatch" in float32. Trying a larger
# `atol` as a way out, its author found the check then passed only some of the time and
# otherwise failed with "Backward is not reentrant"; for anyone who does not care about the
# check, the post suggests commenting gradcheck out or passing `raise_exception=False`. The
# post does not say why its backward varied; the code it was testing is not shown. A CUDA
# extension is the usual reason: CharlesShang/DCNv2#8 (2019) is the same error from a
# deformable-convolution CUDA op checked with `eps=1e-3, atol=1e-4, rtol=1e-2`.
#
# Upstream, pytorch/pytorch#2710 (2017) already asked whether the exact-equality reentrancy test
# was too strict for GPU nondeterminism; pytorch/pytorch#20980 (2019) proposed `nondet_tol` for
# gradcheck and gradgradcheck, with atomic adds as the reason, and by 2020 the maintainers' answer
# in #2710 was that the check is meant to be exact and `nondet_tol` is there for the few ops that
# need it. The error text on 2.13 points to the list of nondeterministic operations in the
# `torch.use_deterministic_algorithms` documentation and to `nondet_tol`. Since
# pytorch/pytorch#55656 (2021) the failure is a `GradcheckError`, a `RuntimeError` subclass. No
# release is known to have changed the behaviour, so the range is open at both ends; the matrix
# shows it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: the same exception from gradcheck, but because the backward is *wrong* (here
# 0.1% too large, and deterministic). That is "Jacobian mismatch", a real bug, and the symptom
# must not claim it.

# %% tags=["hide-cell"]
from torch_pitfalls import Case
from torch_pitfalls.sources import S4


def symptom(run):
    """gradcheck gave up on reentrancy: the two backward runs differ. (A wrong gradient raises
    the same exception type with "Jacobian mismatch"; that is another bug.)"""
    return run.raised(GradcheckError, r"Backward is not reentrant")


class ScaleBySumWrong(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, w):
        ctx.save_for_backward(w)
        return x * w.sum()

    @staticmethod
    def backward(ctx, grad):
        (w,) = ctx.saved_tensors
        return grad * w.sum() * 1.001, None


def near_miss(device):
    _, x, w = layer_and_input(device)
    return gradcheck(lambda inp: ScaleBySumWrong.apply(inp, w), (x,))  # raises: Jacobian mismatch


def check(run, device):
    """gradcheck passed with a tolerance that is tiny next to the gradient (not a blanket
    loosening), and the gradient is sum(w) for every element, with sum(w) computed exactly
    rounded by math.fsum instead of by the layer."""
    value = run.value
    assert value["gradcheck"] is True, value["gradcheck"]
    _, x, w = layer_and_input(device)
    exact = math.fsum(w.cpu().tolist())
    assert 0 < value["nondet_tol"] < 1e-12 * abs(exact), value["nondet_tol"]
    expected = torch.full_like(x.detach(), exact)
    torch.testing.assert_close(value["grad"], expected, rtol=1e-13, atol=0.0)


CASE = Case(
    id="gradcheck-nondeterministic-backward",
    title="gradcheck and a backward that is not bit-for-bit reproducible",
    kind="error",
    symptom_category="error",
    symptom_line="gradcheck raises Backward is not reentrant on a backward that adds in any order.",
    # gradcheck has compared two backward runs for exact equality at least since 2017
    # (pytorch/pytorch#2710 quotes the check); no release is known without it, so no lower
    # bound. Observed on 2.13.0, CPU. Since #55656 the exception is GradcheckError, a
    # RuntimeError subclass (a RuntimeError before); the symptom matches that type and the key words.
    affects="*",
    devices=("cpu", "cuda"),
    sources=(
        S4.at(
            "the paragraph on raising atol: 'Backward is not reentrant' now and then; "
            "raise_exception=False offered to silence gradcheck"
        ),
    ),
    tags=("numerics", "autograd", "gradcheck", "nondeterminism", "nondet_tol"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html",
        "https://github.com/pytorch/pytorch/issues/2710",  # the exact-equality check, 2017
        "https://github.com/pytorch/pytorch/pull/20980",  # nondet_tol: "by using atomicAdd mostly"
        "https://github.com/CharlesShang/DCNv2/issues/8",  # the error from a CUDA op, loosened tolerances
        "https://github.com/pytorch/pytorch/pull/55656",  # failures raise GradcheckError
        "https://docs.pytorch.org/docs/stable/generated/torch.use_deterministic_algorithms.html",
    ),
)
