# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A loss target that requires grad: once refused, now silently trained
#
# A student learns to match a teacher: `loss = nn.MSELoss()(student(x), teacher(x))`. On torch
# 0.3 and 0.4.0 this line stopped with `AssertionError: nn criterions don't compute the gradient
# w.r.t. targets - please mark these variables as volatile or not requiring gradients`. Today it
# runs without a word, and `loss.backward()` sends gradient into the target as well: the
# teacher, the label network or the target branch that was meant to stay fixed receives
# `.grad`, and if its parameters are in the optimizer it is trained to move towards the
# student.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

LR = 0.1
X = [[1.0, 2.0, -1.0], [0.5, -0.5, 2.0]]


def models(device):
    """A student and a teacher (two small linear layers) held in one module, as a distillation
    or target-network setup holds them, and an optimizer over everything in it."""
    with seeded(0):
        both = nn.ModuleDict({"student": nn.Linear(3, 2), "teacher": nn.Linear(3, 2)}).to(device)
    return both, torch.optim.SGD(both.parameters(), lr=LR)


def one_step(device, detach_target, teacher_loss=False):
    both, opt = models(device)
    x = torch.tensor(X, device=device)
    teacher_before = both["teacher"].weight.detach().clone()
    student_before = both["student"].weight.detach().clone()
    target = both["teacher"](x)
    if detach_target:
        target = target.detach()
    else:
        target.retain_grad()  # to see what reaches the target (it is not a leaf)
    pred = both["student"](x)
    pred.retain_grad()
    loss = nn.MSELoss()(pred, target)
    if teacher_loss:  # the teacher trained on purpose, on labels of its own
        labels = torch.tensor([[0.0, 1.0], [1.0, 0.0]], device=device)
        loss = loss + nn.MSELoss()(both["teacher"](x), labels)
    opt.zero_grad()
    loss.backward()
    opt.step()
    return {
        "pred grad": pred.grad.detach(),
        "target grad": None if detach_target else target.grad,
        "teacher moved": (both["teacher"].weight.detach() - teacher_before),
        "student moved": (both["student"].weight.detach() - student_before),
        "pred": pred.detach(),
        "target": target.detach(),
    }


# %% [markdown]
# ## The broken code
# The teacher's output is used as the target as it comes, still attached to the teacher's
# graph, and one optimizer step is taken.


# %%
def broken(device):
    return one_step(device, detach_target=False)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# A loss is a function of two tensors, and autograd differentiates a function with respect to
# every input that requires grad. For `MSELoss`, `d/d target mean((pred - target)**2)` is minus
# the gradient for `pred`, and the other losses differentiate their targets too (see below).
# Calling the second argument "target" does not make it a constant. When the target comes out
# of a network (a teacher in distillation, a target network, a second view of the same input,
# a label encoder), that gradient flows back into the network's parameters. `backward` fills
# their `.grad`, and an optimizer that holds them (a single optimizer over
# `model.parameters()`, or a module that contains both branches) moves the teacher towards the
# student. Nothing fails: both networks drift towards each other, and the loss falls faster
# than it should.
#
# Before 0.4.1 the `nn` loss modules checked the target's `requires_grad` and raised; as the
# message said, the criterions of the time did not compute a gradient for the target. The
# functional forms (`F.mse_loss`) never checked (#7186). Once the derivatives existed, PR #8460
# removed the check from the modules, and the mistake became silent. (On 2.13.0, `MSELoss`,
# `L1Loss`, `SmoothL1Loss`, `BCELoss`, `KLDivLoss` and `CrossEntropyLoss` with probability
# targets all gave a target that requires grad a nonzero gradient when this case was written.)
#
# ## The fix
# Say that the target is a constant: `target = teacher(x).detach()` (or compute it under
# `torch.no_grad()`). Only the student then receives gradient. The teacher's parameters get no
# `.grad` and stay where they are, even in an optimizer that holds them.


# %%
def fixed(device):
    return one_step(device, detach_target=True)


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The source post (S2), in its section on `MSELoss` and `KLDivLoss`, says the target of these
# losses, and of cross entropy and the KL divergence, must be a value that cannot be trained
# (`requires_grad=False`), or an error is raised, and contrasts this with TensorFlow's
# `softmax_cross_entropy_with_logits_v2`, which accepts a trainable target. That describes old
# releases. The loss modules of 0.3 call `_assert_no_grad(target)`, whose message is the one
# quoted at the top (the 0.3.0 documentation's copy of `torch/nn/modules/loss.py`).
# pytorch/pytorch#7186 (May 2018, on 0.4) pointed out that the modules asserted while the
# functionals did not. A maintainer answered that many losses by then returned gradients for their
# targets, and the check should go. pytorch/pytorch#8460, "remove _assert_no_grad from loss
# modules" (merged June 2018, after 0.4.0), removed it: targets of integer type never reach the
# check, derivatives existed for the rest, or autograd itself now says "the derivative for
# 'target' is not implemented". The next release was 0.4.1 (July 2018). This project did not run
# releases older than 1.13, so the `refused` form is cited, not observed. The `target-trained`
# form is observed on 2.13.0.

# %% [markdown]
# ## How the harness checks it
#
# A look-alike: the teacher's weights also move when it is trained on purpose, by a loss of its
# own on true labels, while the student's target is detached. Nothing reaches the target, the
# student's loss does not move the teacher, and that is co-training, not this pitfall.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case
from torch_pitfalls.sources import S2


def symptom(run):
    """The old form: the loss refuses the target. Today's: the loss's gradient reached the
    target (for MSE the target's gradient is exactly minus the prediction's) and the teacher's
    weights moved."""
    if run.raised(AssertionError, r"don't compute the gradient w\.r\.t\. targets"):
        return "refused"
    if run.error is not None or not isinstance(run.value, dict):
        return False
    target_grad, pred_grad = run.value["target grad"], run.value["pred grad"]
    if target_grad is None or not bool(pred_grad.abs().sum() > 0):
        return False
    through_target = torch.allclose(target_grad, -pred_grad)
    teacher_moved = bool(run.value["teacher moved"].abs().sum() > 0)
    return "target-trained" if through_target and teacher_moved else False


def near_miss(device):
    return one_step(device, detach_target=True, teacher_loss=True)


def check(run, device):
    """The teacher did not move at all, and the student moved by exactly -lr times the MSE
    gradient written out by hand: dL/dW = (2 / numel) * (pred - target)^T x."""
    value = run.value
    assert torch.equal(value["teacher moved"], torch.zeros_like(value["teacher moved"])), value["teacher moved"]
    x = torch.tensor(X, device=device)
    diff = value["pred"] - value["target"]
    grad_w = (2.0 / diff.numel()) * diff.T @ x
    torch.testing.assert_close(value["student moved"], -LR * grad_w)


CASE = Case(
    id="loss-target-requires-grad",
    title="A loss target that requires grad: once refused, now silently trained",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A loss whose target requires grad now trains the target network too, without a word.",
    affects=(
        # The old form: the nn loss modules asserted that the target did not require grad (the
        # 0.3 docs' loss.py source; #7186 on 0.4). Not observable here: no lower bound known.
        Affects("<0.4.1", form="refused", reason="the loss modules asserted that the target does not require grad"),
        # Today's form, observed on 2.13.0. PR #8460 (merged June 2018, after 0.4.0) removed the
        # assertion; 0.4.1 was the next release; this project did not run it.
        Affects(
            ">=0.4.1",
            form="target-trained",
            since="pytorch/pytorch#8460 (June 2018, after 0.4.0) removed _assert_no_grad from the "
            "loss modules; 0.4.1 (July 2018) is the first release after it, not run here",
            reason="the loss differentiates its target, so an undetached target's producer is trained",
        ),
    ),
    devices=("cpu", "cuda"),
    sources=(
        S2.at(
            "section 'pytorch中的MSELoss和KLDivLoss': the target must not require grad, "
            "for MSELoss, KL divergence, cross entropy, unlike TensorFlow"
        ),
    ),
    tags=("training", "loss", "detach", "distillation", "requires_grad"),
    references=(
        "https://pytorch.org/docs/0.3.0/_modules/torch/nn/modules/loss.html",  # _assert_no_grad
        "https://github.com/pytorch/pytorch/issues/7186",  # modules assert, functionals do not
        "https://github.com/pytorch/pytorch/pull/8460",  # "remove _assert_no_grad from loss modules"
        "https://github.com/pytorch/pytorch/issues/21014",  # a user asking what replaced it (2019)
        "https://docs.pytorch.org/docs/stable/generated/torch.Tensor.detach.html",
    ),
)
