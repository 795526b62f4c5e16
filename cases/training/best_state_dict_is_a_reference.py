# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # The "best" `state_dict` that keeps training
#
# The training loop keeps the best model seen so far: whenever the validation loss improves it
# stores `best_state = model.state_dict()`, and after the last epoch it calls
# `model.load_state_dict(best_state)`. The log says the best epoch was epoch 1, yet the restored
# model scores exactly like the last, overfitted epoch. Nothing raised: the "snapshot" was never
# a snapshot. It held the model's own parameter tensors, and every optimizer step after epoch 1
# changed them.

# %%
import copy

import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# A one-input linear model trained with SGD on `y = 3x`, validated on `y = 1.5x`. The validation
# loss falls for two epochs and then rises, so the best epoch is epoch 1 of 6. The loop keeps
# `model.state_dict()` whenever the validation loss improves and restores it at the end.

# %%
X, Y_TRAIN, Y_VALID = [1.0, 2.0], [3.0, 6.0], [1.5, 3.0]
EPOCHS, LR = 6, 0.05


def make_model(device):
    with seeded(0):
        model = nn.Linear(1, 1)
    with torch.no_grad():
        model.weight.zero_()
        model.bias.zero_()
    return model.to(device)


def flat(model):
    return torch.cat([p.detach().flatten() for p in model.parameters()])  # [weight, bias]


def train_keeping_best(device, snapshot, update_best_loss=True):
    model = make_model(device)
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x = torch.tensor(X, device=device).unsqueeze(1)
    y_train = torch.tensor(Y_TRAIN, device=device).unsqueeze(1)
    y_valid = torch.tensor(Y_VALID, device=device).unsqueeze(1)
    best_loss, best_epoch, best_state = float("inf"), None, None
    for epoch in range(EPOCHS):
        opt.zero_grad()
        ((model(x) - y_train) ** 2).mean().backward()
        opt.step()
        with torch.no_grad():
            valid_loss = ((model(x) - y_valid) ** 2).mean().item()
        if valid_loss < best_loss:
            best_epoch, best_state = epoch, snapshot(model)
            if update_best_loss:
                best_loss = valid_loss
    final = flat(model).clone()
    model.load_state_dict(best_state)
    return {"best_epoch": best_epoch, "restored": flat(model).clone(), "final": final}


def broken(device):
    return train_keeping_best(device, snapshot=lambda model: model.state_dict())


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))  # restored == final, although the best epoch is 1

# %% [markdown]
# ## Why
# `state_dict()` builds a new dictionary, but its values are not copies. For every parameter
# and buffer it stores a detached tensor that shares storage with the live one (the same
# memory, without the autograd history). `optimizer.step()` updates parameters in place, so
# every later step also writes into the tensors held in `best_state`. When training ends,
# `best_state` holds the final weights, and `load_state_dict(best_state)` copies the model onto
# itself. The same thing happens with any structure that only holds references, such as
# `dict(model.state_dict())`, a list of `model.parameters()`, or `p.data` kept in a list.
# Saving to disk with `torch.save` copies the bytes at that moment, which is why the pattern
# "save the best checkpoint to a file" works while "keep it in a variable" does not.
#
# ## The fix
# Copy the tensors when you take the snapshot. `copy.deepcopy(model.state_dict())` does it in
# one call. A dict comprehension, `{k: v.detach().clone() for k, v in
# model.state_dict().items()}`, does the same and lets you add `.cpu()` to keep the copy off the
# GPU.


# %%
def fixed(device):
    return train_keeping_best(device, snapshot=lambda model: copy.deepcopy(model.state_dict()))


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The "Saving and Loading Models" tutorial carries a note on exactly this: when only the best
# model is kept, `best_model_state = model.state_dict()` is a reference, so serialize it or
# deep-copy it, or the kept state ends up as the overfitted one. The tutorials repository itself
# had the bug: pytorch/tutorials#188 ("Fixed deep copying model.state_dict()",
# 2017) wraps its `best_model_wts = model.state_dict()` in `copy.deepcopy`, because without it
# the best weights always followed the last epoch. The same fix reached thunlp/OpenKE#131
# ("deepcopy the model": the best model was always the newest one),
# sicara/easy-few-shot-learning#129 and WenjieDu/PyPOTS#667 ("Issue with saving the best model
# state": different results although the best model was at the same epoch). In
# pytorch/pytorch#34765 a user asked for a `copy=True` option on `state_dict()` after finding
# that it returns references; the maintainer's answer was `copy.deepcopy` or saving the
# dictionary to a file, and pytorch/pytorch#83104 proposed saying "references" in the
# docstring. The behaviour is the design of `state_dict` and no release has changed it.

# %% [markdown]
# ## How the harness checks it
# A restored model that equals the last epoch is not always this pitfall. If the comparison
# never updates `best_loss` (the assignment was forgotten), every epoch counts as an
# improvement. The code then keeps a proper deep copy, but of the last epoch, and reports that
# epoch as the best. The symptom requires the restored weights to equal the final ones *while
# the recorded best epoch is an earlier one*, which rules that bug out. The fix is checked
# against plain-Python gradient descent on the same data.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The restored parameters equal the final ones although the best epoch was an earlier
    one: the kept "snapshot" followed the training to its end."""
    if run.error is not None:
        return False
    seen = run.value
    return seen["best_epoch"] < EPOCHS - 1 and torch.equal(seen["restored"], seen["final"])


def near_miss(device):
    return train_keeping_best(device, snapshot=lambda model: copy.deepcopy(model.state_dict()), update_best_loss=False)


def _by_hand():
    """Full-batch gradient descent on w*x + b written out in Python floats: the parameters and
    the validation loss after every epoch, and the epoch with the lowest validation loss."""
    w = b = 0.0
    history = []
    for _ in range(EPOCHS):
        errors = [w * x + b - y for x, y in zip(X, Y_TRAIN)]
        dw = 2 * sum(e * x for e, x in zip(errors, X)) / len(X)
        db = 2 * sum(errors) / len(X)
        w, b = w - LR * dw, b - LR * db
        valid = sum((w * x + b - y) ** 2 for x, y in zip(X, Y_VALID)) / len(X)
        history.append((valid, w, b))
    best = min(range(EPOCHS), key=lambda e: history[e][0])
    return best, history[best][1:]


def check(run, device):
    """The best epoch and the restored parameters are those of the plain-Python run (epoch 1)."""
    best, (w, b) = _by_hand()
    assert run.value["best_epoch"] == best, (run.value["best_epoch"], best)
    torch.testing.assert_close(run.value["restored"], torch.tensor([w, b], device=device))


CASE = Case(
    id="best-state-dict-is-a-reference",
    title='The "best" state_dict that keeps training',
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="The best model kept with best = model.state_dict() restores the last epoch's weights.",
    affects=(Affects("*", reason="state_dict() returns tensors that share storage with the parameters, by design"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="PyTorch tutorial: Saving and Loading Models (note on keeping only the best model)",
            url="https://pytorch.org/tutorials/beginner/saving_loading_models.html",
        ),
        Source(
            title="pytorch/tutorials#188: Fixed deep copying model.state_dict()",
            url="https://github.com/pytorch/tutorials/pull/188",
        ),
        Source(
            title="pytorch/pytorch#34765: Add ability to return a copy to Module's state_dict member function",
            url="https://github.com/pytorch/pytorch/issues/34765",
        ),
        Source(title="thunlp/OpenKE#131: deepcopy the model", url="https://github.com/thunlp/OpenKE/pull/131"),
        Source(
            title="WenjieDu/PyPOTS#667: Issue with saving the best model state",
            url="https://github.com/WenjieDu/PyPOTS/issues/667",
        ),
    ),
    tags=("training", "state_dict", "checkpoint", "early_stopping", "deepcopy"),
    references=(
        "https://github.com/sicara/easy-few-shot-learning/pull/129",
        "https://github.com/pytorch/pytorch/pull/83104",  # docstring: "references to a whole state"
        "https://docs.pytorch.org/docs/stable/generated/torch.nn.Module.html#torch.nn.Module.state_dict",
    ),
)
