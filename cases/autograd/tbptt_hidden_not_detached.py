# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # A hidden state carried across batches drags the old graph along
#
# You train a recurrent model on a long sequence cut into chunks, and carry the hidden state
# from one chunk to the next so the model keeps its memory (truncated backpropagation
# through time). The first chunk trains; the second fails in `loss.backward()` with
# `RuntimeError: Trying to backward through the graph a second time`. You called `backward()`
# once per chunk, but the hidden state you passed in still belonged to the first chunk's
# graph.

# %%
import torch
from torch import nn

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# An `nn.RNN` and a linear head on a sequence of 12 steps, trained in chunks of 4 steps with
# one optimizer step per chunk. The final hidden state of each chunk is fed to the next.

# %%
HIDDEN, CHUNK, LR = 3, 4, 0.1


def sequence(device):
    return torch.randn(1, 12, 2, generator=torch.Generator().manual_seed(0)).to(device)


def train_in_chunks(device, carry):
    """`carry(h)` is what the next chunk receives as its initial hidden state."""
    with seeded(0):
        rnn = nn.RNN(2, HIDDEN, batch_first=True).to(device)
        head = nn.Linear(HIDDEN, 1).to(device)
    opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=LR)
    h = torch.zeros(1, 1, HIDDEN, device=device)
    losses = []
    for chunk in sequence(device).split(CHUNK, dim=1):
        out, h = rnn(chunk, carry(h))
        loss = head(out).pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return {"losses": losses, "weight_hh": rnn.weight_hh_l0.detach().clone()}


def broken(device):
    return train_in_chunks(device, carry=lambda h: h)


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# The hidden state `h` that comes out of chunk 1 is an output of chunk 1's graph: its
# `grad_fn` leads back through every time step of that chunk to the weights. Feeding it into
# chunk 2 links chunk 2's graph onto chunk 1's, so chunk 2's `backward()` does not stop at the
# chunk boundary; it continues into chunk 1's nodes, whose saved activations the first
# `backward()` already freed. Hence "a second time". Keeping them with
# `retain_graph=True` only trades the error for worse ones: each chunk's backward walks the
# whole history, so time and memory grow with the sequence, and after `optimizer.step()` has
# changed the weights in place the walk fails on a modified tensor instead.
#
# ## The fix
# Cut the history at each chunk boundary while keeping the value: pass `h.detach()` (for an
# LSTM, detach both `h` and `c`). The memory of the sequence flows forward; gradients stop at
# the chunk's start, which is what truncated BPTT means.


# %%
def fixed(device):
    return train_in_chunks(device, carry=lambda h: h.detach())


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The word-language-model example in pytorch/examples detaches the hidden state at the start
# of every batch in a `repackage_hidden` helper, with a comment saying that otherwise the
# model would backpropagate all the way to the start of the dataset. The discuss.pytorch.org
# thread "Implementing Truncated Backpropagation Through Time" works through the same
# boundary, and PyTorch Lightning's TBPTT guide shows the `hiddens.detach()` step explicitly.
# The error comes from autograd freeing saved tensors after `backward()`, unchanged in every
# release (the related `backward-twice` case shows it with a single graph).

# %% [markdown]
# ## How the harness checks it
# The symptom is the "backward through the graph a second time" `RuntimeError`. Another
# autograd failure in the same loop, with the hidden state detached correctly, is refused:
# clamping the sigmoid of the prediction in place (`pred.clamp_(...)`) overwrites a tensor
# the sigmoid saved for its backward, and `backward()` fails with a `RuntimeError` about a
# variable "modified by an inplace operation". The fix's check replays the training with each
# chunk's starting state rebuilt from its plain numbers, a tensor with no history at all.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """backward() failed because it reached a graph (the previous chunk's) already freed."""
    return run.raised(RuntimeError, r"backward through the graph a second time")


def near_miss(device):
    with seeded(0):
        rnn = nn.RNN(2, HIDDEN, batch_first=True).to(device)
        head = nn.Linear(HIDDEN, 1).to(device)
    opt = torch.optim.SGD([*rnn.parameters(), *head.parameters()], lr=LR)
    h = torch.zeros(1, 1, HIDDEN, device=device)
    for chunk in sequence(device).split(CHUNK, dim=1):
        out, h = rnn(chunk, h.detach())
        pred = torch.sigmoid(head(out))
        pred.clamp_(1e-6, 1 - 1e-6)  # in place on the sigmoid's saved output
        loss = pred.pow(2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()


def check(run, device):
    """The same losses and final recurrent weight as a replay in which each chunk starts from
    a brand-new tensor holding the carried state's values: no graph to cut."""
    expected = train_in_chunks(device, carry=lambda h: torch.tensor(h.tolist(), device=h.device))
    assert len(run.value["losses"]) == len(expected["losses"]) == 3, run.value
    torch.testing.assert_close(torch.tensor(run.value["losses"]), torch.tensor(expected["losses"]))
    torch.testing.assert_close(run.value["weight_hh"], expected["weight_hh"])


CASE = Case(
    id="tbptt-hidden-not-detached",
    title="A hidden state carried across batches drags the old graph along",
    kind="error",
    symptom_category="error",
    symptom_line="Training an RNN in chunks fails on the second chunk: Trying to backward through the graph a second time.",
    # Autograd frees saved tensors after backward(); the carried state links the graphs. No release
    # changed either.
    affects=(Affects("*", reason="saved tensors are freed after backward(); the same in every release"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title="pytorch/examples: word_language_model/main.py, repackage_hidden()",
            url="https://github.com/pytorch/examples/blob/main/word_language_model/main.py",
        ),
        Source(
            title="discuss.pytorch.org: Implementing Truncated Backpropagation Through Time",
            url="https://discuss.pytorch.org/t/implementing-truncated-backpropagation-through-time/15500",
        ),
        Source(
            title="PyTorch Lightning docs: Truncated Backpropagation Through Time (TBPTT)",
            url="https://lightning.ai/docs/pytorch/stable/common/tbptt.html",
        ),
    ),
    tags=("autograd", "rnn", "tbptt", "detach", "retain_graph"),
    references=("https://pytorch.org/docs/stable/generated/torch.Tensor.detach.html",),
)
