# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # gradcheck in float32: a Jacobian mismatch that is not a bug
#
# You call `torch.autograd.gradcheck` to make sure a layer's backward is right, and it stops
# with `GradcheckError: Jacobian mismatch for output 0 with respect to input 0`, printing a
# "numerical" Jacobian full of zeros and round-looking numbers next to an "analytical" one that
# looks perfectly reasonable. Just before it, a `UserWarning` said the input "is not a double
# precision floating point". The backward is fine: the check itself cannot work in float32.

# %%
import torch
from torch import nn
from torch.autograd import gradcheck

from torch_pitfalls import observe, seeded

try:
    from torch.autograd.gradcheck import GradcheckError
except ImportError:  # before the 2021 refactor (pytorch/pytorch#55656): a plain RuntimeError
    GradcheckError = RuntimeError

# %% [markdown]
# ## The broken code
# A tiny layer (linear, then sigmoid) built and fed in the default dtype, float32, and checked
# with gradcheck's default settings. The module comes from `seeded(0)`, the input from a local
# generator: the same numbers on every run. (The failure does not depend on them: it showed on
# each of 200 seeds tried while writing this case.)


# %%
def layer_and_input(device, dtype):
    with seeded(0):
        layer = nn.Sequential(nn.Linear(3, 2), nn.Sigmoid())
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(4, 3, generator=gen, device=device, dtype=dtype, requires_grad=True)
    return layer.to(device, dtype), x


def broken(device):
    layer, x = layer_and_input(device, torch.float32)
    return gradcheck(layer, (x,))  # raises


# %% [markdown]
# The near miss is such a real bug: a sigmoid whose hand-written backward is 0.5% too large,
# checked the right way, in float64. gradcheck raises the same `GradcheckError` about the
# Jacobian, and this time it is right; no precision warning comes with it.


# %%
class SlightlyWrongSigmoid(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x):
        y = torch.sigmoid(x)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad):
        (y,) = ctx.saved_tensors
        return grad * y * (1 - y) * 1.005  # 0.5% too large


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# gradcheck compares the Jacobian autograd computes with one it estimates by central
# differences, `(f(x + eps) - f(x - eps)) / (2 * eps)` with `eps = 1e-6`, under
# `allclose(atol=1e-5, rtol=1e-3)`. Those defaults are made for float64. In float32 the gap
# between neighbouring numbers near 0.5 is 2**-25 or 2**-24 (3e-8 or 6e-8), so the two outputs
# (sigmoids near 0.5) differ by only a few such steps, and their difference divided by 2e-6 can
# only be a multiple of about 0.015: the "numerical" Jacobian in the error is made of 0, 0.0298,
# 0.0447, -0.0596, -0.1490, ... — rounding noise, not derivatives. The analytical side is right.
#
# Raising `eps` or `atol` only hides this. Over 200 seeds of this layer and input, `eps=1e-3`
# still failed 83 times (a pass is a lucky draw) and `eps=1e-2` passed them all; but a check
# that coarse no longer checks much: with the post's own loosened settings
# (`eps=1e-3, atol=1e-4, rtol=1e-2`) a backward that is 0.5% wrong (the near miss's sigmoid)
# passes (the demo below), where the float64 check with the defaults rejects it. The source post
# met another face of loose settings on the GPU: a non-deterministic backward then fails
# "Backward is not reentrant" instead (gradcheck's `nondet_tol` is for that).
#
# Half a fix is not enough either: a float64 input into a module whose weights are still
# float32 does not get a mismatch, it raises at once (`mat1 and mat2 must have the same dtype`),
# because the layer's matmul refuses mixed dtypes. Both must be float64.

# %%
if __name__ == "__main__":
    loose = dict(eps=1e-3, atol=1e-4, rtol=1e-2, raise_exception=False)
    x32 = torch.rand(4, 3, generator=torch.Generator().manual_seed(0), requires_grad=True)
    print("float32, loosened:", gradcheck(SlightlyWrongSigmoid.apply, (x32,), **loose))  # True
    x64 = x32.detach().double().requires_grad_()
    strict = gradcheck(SlightlyWrongSigmoid.apply, (x64,), raise_exception=False)
    print("float64, defaults:", strict)  # False
    layer, _ = layer_and_input("cpu", torch.float32)
    print(observe(gradcheck, layer, (x64,)))  # a dtype error, not a mismatch

# %% [markdown]
# ## The fix
# Run the check in float64, the input *and* the module: `eps=1e-6` is then far above float64's
# resolution (2**-53 ≈ 1e-16) and the default tolerances hold. Keep the defaults; if a check
# needs looser ones, find out why. Independently of gradcheck, the analytical gradient is also
# compared with the derivative written out by hand: for `s = sigmoid(x W^T + b)`,
# `d(sum s)/dx = (s * (1 - s)) W`.


# %%
def fixed(device):
    layer, x = layer_and_input(device, torch.float64)
    passes = gradcheck(layer, (x,), raise_exception=False)
    (grad,) = torch.autograd.grad(layer(x).sum(), x)
    return {"gradcheck": passes, "grad": grad}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S4) is about exactly this error from models whose tests call gradcheck. It
# traces it to float32 data, notes that random inputs make it pass now and then, rejects a
# larger `eps` or `atol` as a real fix (its own attempt with a bigger `atol` ran into "Backward is
# not reentrant"), and converts inputs and module to double, as in the PyTorch Forums thread
# "Why is nn.Linear failing gradcheck?" that it quotes; it also shows that `torch.sigmoid`
# passes in float32 with `eps=1e-3` and fails with `1e-4`, and passes in float64 down to `1e-6`.
#
# Upstream, the same report with `nn.Linear` on torch 0.3.1 (pytorch/pytorch#5351) was answered
# "add `.double()` calls". pytorch/pytorch#8659 asked gradcheck to warn below float64 and
# pytorch/pytorch#8663 (June 2018) added the warning seen above; gradcheck's documentation says
# its defaults are designed for double-precision input and "will likely fail" for less. The 2021
# refactor pytorch/pytorch#55656 made every gradcheck failure a `GradcheckError`, a `RuntimeError`
# subclass (code catching `RuntimeError` still works). pytorch/pytorch#2710 is where `nondet_tol`
# is offered for backward passes that are not bit-for-bit reproducible.

# %% [markdown]
# ## How the harness checks it

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S4


def symptom(run):
    """A GradcheckError about the Jacobian, after a warning that the input is not float64.

    The warning is what tells this apart from a real bug: a wrong backward checked in float64
    raises the same GradcheckError with no warning, and this predicate is False for it.
    """
    return run.raised(GradcheckError, r"Jacobian mismatch") and run.warned(
        UserWarning, r"not (of |a )?double precision"
    )


def near_miss(device):
    gen = torch.Generator(device=device).manual_seed(0)
    x = torch.rand(4, 3, generator=gen, device=device, dtype=torch.float64, requires_grad=True)
    return gradcheck(SlightlyWrongSigmoid.apply, (x,))  # raises, rightly


def check(run, device):
    """gradcheck passed, and autograd's gradient equals (s * (1 - s)) W for s = sigmoid(x Wᵀ + b),
    the derivative written out by hand from the same seeded float64 layer and input."""
    assert run.value["gradcheck"] is True, "gradcheck in float64 failed"
    layer, x = layer_and_input(device, torch.float64)
    weight, bias = layer[0].weight.detach(), layer[0].bias.detach()
    s = 1 / (1 + torch.exp(-(x.detach() @ weight.T + bias)))
    torch.testing.assert_close(run.value["grad"], (s * (1 - s)) @ weight)


CASE = Case(
    id="gradcheck-float32",
    title="gradcheck in float32: a Jacobian mismatch that is not a bug",
    kind="error",
    symptom_category="error",
    symptom_line="gradcheck in float32 raises a Jacobian mismatch on a backward that is correct.",
    star=True,  # a pitfall the source posts single out
    # The mismatch is float32 arithmetic against tolerances made for float64: it was reported on
    # 0.3.1 (#5351) and shows on 2.13.0 here. The symptom also asks for the precision warning,
    # which landed in June 2018 (#8663): 1.0 is the first release certainly after it (whether
    # 0.4.1 carries it was not checked). Since #55656 (2021) the exception is GradcheckError, a
    # RuntimeError subclass. No release is known to have changed the behaviour.
    affects=(
        Affects(
            ">=1.0",
            since="the warning came with pytorch/pytorch#8663 (June 2018); 1.0.0 (December "
            "2018) is the first release certainly after it; the mismatch itself is reported on 0.3.1 (#5351)",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S4.at(
            "the whole post: float32 inputs, eps/atol as a non-fix, the nn.Linear example, "
            "the sigmoid eps=1e-3 vs 1e-4 experiment"
        ),
    ),
    tags=("numerics", "autograd", "gradcheck", "float32", "float64"),
    references=(
        "https://docs.pytorch.org/docs/stable/generated/torch.autograd.gradcheck.gradcheck.html",
        "https://github.com/pytorch/pytorch/issues/5351",  # nn.Linear "fails" gradcheck in float32
        "https://github.com/pytorch/pytorch/issues/8659",  # asks for a warning below float64
        "https://github.com/pytorch/pytorch/pull/8663",  # adds that warning
        "https://github.com/pytorch/pytorch/pull/55656",  # failures raise GradcheckError
        "https://github.com/pytorch/pytorch/issues/2710",  # nondet_tol for "not reentrant" backward
    ),
)
