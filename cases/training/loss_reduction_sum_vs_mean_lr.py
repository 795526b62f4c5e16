# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # `reduction="sum"` multiplies the learning rate by the batch size
#
# A learning rate that trained your model well stops working after a small change: the loss
# now grows from the first steps and overflows to `inf` or `nan`. The change was the loss,
# `nn.MSELoss(reduction="sum")` instead of the default, perhaps to match a paper's formula,
# or the batch size went up. With a summed loss the gradient grows with the number of samples
# in the batch, and so does every step.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Linear regression on batches of 64 samples, plain SGD with learning rate 0.1 (a sensible
# value for a mean loss here), five steps. The loss is built with `reduction="sum"`.

# %%
BATCH, FEATURES, STEPS, LR = 64, 4, 5, 0.1
TRUE_W = [1.0, -2.0, 0.5, 3.0]


def data():
    x = torch.randn(STEPS, BATCH, FEATURES, generator=torch.Generator().manual_seed(0))
    return x, x @ torch.tensor(TRUE_W).unsqueeze(1)


def train(device, reduction, lr=LR):
    with seeded(0):
        model = nn.Linear(FEATURES, 1, bias=False).to(device)
    initial = model.weight.detach().clone()
    criterion = nn.MSELoss(reduction=reduction)
    opt = torch.optim.SGD(model.parameters(), lr=lr)
    xs, ys = data()
    losses, first_grad = [], None
    for x, y in zip(xs.to(device), ys.to(device)):
        opt.zero_grad()
        loss = criterion(model(x), y)
        loss.backward()
        if first_grad is None:
            first_grad = model.weight.grad.clone()
        opt.step()
        losses.append(nn.functional.mse_loss(model(x), y).item())  # per-sample mean, to compare
    return {"initial": initial, "first_grad": first_grad, "losses": losses, "weight": model.weight.detach().clone()}


def broken(device):
    return train(device, reduction="sum")


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The gradient of a sum is the sum of the per-sample gradients, so with `reduction="sum"` it is
# `BATCH` times the gradient of the mean, here 64 times. SGD's step is `lr * grad`, so the
# effective learning rate is `64 * 0.1 = 6.4`. For this problem the mean loss's curvature is
# about 2, and gradient descent diverges once `lr * curvature` exceeds 2: at 6.4 each step
# overshoots the minimum by more than it corrects, and the loss grows a few hundredfold per
# step (2.6e3 after the first step, 5e12 after the fifth).
# A summed loss also makes the right learning rate depend on the batch size, so a value
# tuned at one batch size breaks at another, and a weight-decay term added to it loses
# weight as batches grow. (Adam largely hides the scale, since it divides by the gradient's
# magnitude; SGD does not.)
#
# ## The fix
# Keep the default `reduction="mean"`, or divide the summed loss by the batch size before
# `backward()`. If the sum is what you want, scale the learning rate down by the batch size
# yourself and know that it is now tied to it.


# %%
def fixed(device):
    return train(device, reduction="mean")


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The loss classes' documentation (`nn.MSELoss` and the others) defines `reduction`: "mean"
# divides by the number of elements, "sum" does not. The Cross Validated question "Is it common
# practice to minimize the mean loss over the batches instead of the sum?" is answered with
# this point: the learning rate is sensitive to the loss's magnitude, so averaging keeps it
# independent of the batch size. It is the arithmetic of gradients, the same in every release.

# %% [markdown]
# ## How the harness checks it
# The symptom is a gradient exactly `BATCH` times the mean-loss gradient (computed by hand from
# the data) together with a loss that grew. A learning rate simply set too high (`lr=1.5` with
# the mean loss) diverges too, but its gradient is the mean-loss one, so the symptom refuses
# it. The fix's check replays the five SGD steps in NumPy, with the mean-squared-error gradient
# written out by hand.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The first gradient is BATCH times the mean-loss gradient, d/dw mean((x w^T - y)^2) =
    2/N (x w^T - y)^T x (by hand, float64), and the loss after the last step is larger than
    after the first: the summed loss blew the steps up."""
    if run.error is not None:
        return False
    xs, ys = data()
    w0 = run.value["initial"].cpu().double()
    x, y = xs[0].double(), ys[0].double()
    expected = 2.0 / x.shape[0] * (x @ w0.T - y).T @ x
    grad = run.value["first_grad"].cpu().double()
    losses = run.value["losses"]
    return torch.allclose(grad, BATCH * expected, rtol=1e-4, atol=1e-4) and losses[-1] > losses[0]


def near_miss(device):
    return train(device, reduction="mean", lr=1.5)


def check(run, device):
    """The final weight equals five SGD steps on the mean loss done in NumPy (float64, gradient
    by hand) from the same initial weight, and the loss went down."""
    xs, ys = data()
    w = run.value["initial"].cpu().double().numpy()
    for x, y in zip(xs.double().numpy(), ys.double().numpy()):
        err = x @ w.T - y
        w = w - LR * (2.0 / len(x)) * err.T @ x
    torch.testing.assert_close(run.value["weight"].cpu().double(), torch.from_numpy(w), rtol=1e-4, atol=1e-5)
    assert run.value["losses"][-1] < run.value["losses"][0], run.value["losses"]


CASE = Case(
    id="loss-reduction-sum-vs-mean-lr",
    title='reduction="sum" multiplies the learning rate by the batch size',
    kind="silent",
    symptom_category="wrong-values",
    symptom_line='With reduction="sum" a learning rate that worked makes the loss explode: the step grows with the batch.',
    # The gradient of a sum; the loss classes' default has been reduction="mean" since 1.0.
    affects=(Affects("*", reason="the gradient of a summed loss scales with the batch; the same in every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="Cross Validated 201452: Is it common practice to minimize the mean loss over "
            "the batches instead of the sum?",
            url="https://stats.stackexchange.com/questions/201452/is-it-common-practice-to-minimize-the-mean-loss-over-the-batches-instead-of-the",
        ),
        Source(
            title="PyTorch docs: torch.nn.MSELoss, the reduction argument",
            url="https://pytorch.org/docs/stable/generated/torch.nn.MSELoss.html",
        ),
    ),
    tags=("loss", "reduction", "learning_rate", "batch_size"),
    references=("https://pytorch.org/docs/stable/generated/torch.optim.SGD.html",),
)
