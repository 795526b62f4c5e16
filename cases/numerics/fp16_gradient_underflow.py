# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Small gradients flushed to zero in float16
#
# To save memory and time, the model is converted to half precision with `model.half()` and
# trained as before. The loss is a normal number and goes down; but some weights never move.
# Their gradients are not small, they are exactly `0.0`: the true values, around `1e-9`, lie
# below the smallest number float16 can hold, and every one of them is rounded to zero before
# the optimizer sees it.

# %%
import torch

from torch_pitfalls import observe

# %% [markdown]
# ## The broken code
# Two half-precision weights. `v` fits a target through the main loss; `w` enters a small
# auxiliary term, a loss weight of `2⁻¹⁴` (about `6e-5`) times `w` times a small activation
# `a = 2⁻¹⁴`. The exact gradient of `w` is `2⁻¹⁴ · 2⁻¹⁴ = 2⁻²⁸ ≈ 3.7e-9`. The function returns
# both gradients, and the same computation done in float32 for comparison.

# %%
AUX_WEIGHT = 2.0**-14  # ≈ 6.1e-5, a typical small loss weight
ACTIVATION = 2.0**-14  # a small activation (float16's smallest normal number)


def loss_and_weights(device, dtype):
    v = torch.tensor(1.0, dtype=dtype, device=device, requires_grad=True)
    w = torch.tensor(1.0, dtype=dtype, device=device, requires_grad=True)
    a = torch.tensor(ACTIVATION, dtype=dtype, device=device)
    d = v - 1.5
    loss = d * d + AUX_WEIGHT * (w * a)  # 0.25 + a tiny auxiliary term
    return loss, v, w


def float32_reference(device):
    loss, v, w = loss_and_weights(device, torch.float32)
    loss.backward()
    return w.grad


def broken(device):
    loss, v, w = loss_and_weights(device, torch.float16)  # the model after .half()
    loss.backward()
    return {"loss": loss.detach(), "v_grad": v.grad, "w_grad": w.grad, "w_grad_float32": float32_reference(device)}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# float16 has 5 exponent bits: its smallest normal number is `2⁻¹⁴ ≈ 6.1e-5` and its smallest
# subnormal `2⁻²⁴ ≈ 6e-8`. Backpropagation multiplies: the gradient reaching `w` is the
# upstream gradient (`2⁻¹⁴`, the loss weight) times the activation (`2⁻¹⁴`), and the product
# `2⁻²⁸` is rounded to the nearest float16, which is 0. Nothing signals it; the loss itself,
# about 0.25, is perfectly representable, so the training curve looks normal. In real models
# the same thing happens to the gradients of many weights at once (small activations, losses
# averaged over large batches, late training when errors are small), and the updates they
# should have made are lost. float32 has 8 exponent bits and represents `3.7e-9` without
# trouble, which is why the same code trains in full precision.
#
# ## The fix
# Scale the loss before `backward()` so the gradients land in float16's range, then unscale
# them in float32 before using them: that is what `GradScaler` does (`torch.cuda.amp.GradScaler`,
# `torch.amp.GradScaler` since 2.3), with a scale it adapts, skipping the steps whose gradients
# overflow to `inf`. Here, by hand, with a fixed
# scale of `2¹⁴`: `v`'s gradient becomes `-16384` (below float16's maximum, 65504) and `w`'s
# `2⁻¹⁴`; divided by the scale in float32, they are `-1` and `2⁻²⁸` exactly. Keeping the
# weights themselves in float32 (mixed precision, `torch.autocast`) is the usual companion:
# an update of `1e-9` added to a float16 weight of 1 would be rounded away as well. The check
# compares with the gradients worked out by hand: `2 (v − 1.5) = −1` and `2⁻²⁸`.

# %%
SCALE = 2.0**14


def fixed(device):
    loss, v, w = loss_and_weights(device, torch.float16)
    (loss * SCALE).backward()  # gradients scaled into range
    v_grad, w_grad = v.grad.float() / SCALE, w.grad.float() / SCALE  # unscaled in float32
    return {"loss": loss.detach(), "v_grad": v_grad, "w_grad": w_grad, "w_grad_float32": float32_reference(device)}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The "Gradient Scaling" section of the PyTorch automatic mixed precision documentation
# explains that an op with float16 inputs produces float16 gradients, that small gradient
# values can flush to zero ("underflow") and lose the corresponding updates, and that scaling
# the loss prevents it; `GradScaler` shipped in 1.5, after the design review of
# pytorch/pytorch#26512 ("Gradient scaling API"), and the corpus's
# `cuda-amp-gradscaler-deprecated` follows its move to `torch.amp` in 2.3. The
# technique comes from Micikevicius et al., "Mixed Precision Training" (ICLR 2018), which found
# a large share of the activation gradients of real networks below float16's range, and
# introduced loss scaling and float32 master weights. The rounding is IEEE arithmetic, the same
# on CPU and GPU; the matrix observes it on CPU from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A float16 gradient of exactly zero is not always an underflow: a weight whose true gradient
# is zero (behind a ReLU that is off, say) has a zero gradient in every precision. The symptom
# asks for the float32 computation of the same gradient to be nonzero.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The float16 gradient of w is exactly zero while the same computation in float32 gives a
    nonzero gradient: the value underflowed."""
    if run.error is not None:
        return False
    v = run.value
    return v["w_grad"].dtype == torch.float16 and v["w_grad"].item() == 0.0 and v["w_grad_float32"].item() != 0.0


def near_miss(device):
    """A weight whose input is 0 (behind a ReLU that is off): zero gradient in float16, and in
    float32 too."""

    def grad(dtype):
        w = torch.tensor(1.0, dtype=dtype, device=device, requires_grad=True)
        a = torch.tensor(0.0, dtype=dtype, device=device)
        (w * a + 1.0).backward()
        return w.grad

    return {
        "loss": torch.tensor(1.0, dtype=torch.float16, device=device),
        "v_grad": None,
        "w_grad": grad(torch.float16),
        "w_grad_float32": grad(torch.float32),
    }


def check(run, device):
    """The gradients are 2 (v - 1.5) = -1 and AUX_WEIGHT * ACTIVATION = 2^-28, worked out by
    hand, in float32."""
    assert run.error is None, f"raised {run.error!r}"
    torch.testing.assert_close(run.value["w_grad"], torch.tensor(2.0**-28, device=device), rtol=0, atol=0)
    torch.testing.assert_close(run.value["v_grad"], torch.tensor(-1.0, device=device))


CASE = Case(
    id="fp16-gradient-underflow",
    title="Small gradients flushed to zero in float16",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A small gradient is exactly 0 in float16, so its weight never moves, and nothing warns.",
    # IEEE half-precision rounding, the same in every release; the CPU float16 ops used here
    # (sub, mul and their backward) run on every release of the matrix (1.13.1 on).
    affects=(Affects("*", reason="float16 cannot represent magnitudes below 2^-24; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch documentation: Automatic Mixed Precision, section 'Gradient Scaling'",
            url="https://docs.pytorch.org/docs/stable/amp.html#gradient-scaling",
        ),
        Source(
            title="Micikevicius et al., Mixed Precision Training (ICLR 2018)", url="https://arxiv.org/abs/1710.03740"
        ),
    ),
    tags=("numerics", "float16", "amp", "grad_scaler"),
    references=(
        "https://github.com/pytorch/pytorch/pull/26512",  # the gradient scaling API (GradScaler)
        "https://docs.pytorch.org/tutorials/recipes/recipes/amp_recipe.html",
    ),
)
