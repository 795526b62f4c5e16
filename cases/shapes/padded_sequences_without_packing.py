# ---
# jupyter:
#   jupytext:
#     text_representation:
#       extension: .py
#       format_name: percent
# ---

# %% [markdown]
# # Padded sequences fed to an RNN without packing
#
# Sentences of different lengths are padded with zeros to the longest one, stacked into a
# batch and passed to an `nn.GRU`; its final hidden state `h_n` is used as each sentence's
# encoding. The long sentences are encoded correctly. The short ones are not: the GRU kept
# running over their padding, and the zeros changed the state it ends in. The same sentence
# gets a different encoding depending on how long the other sentences in its batch are.

# %%
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_sequence

from torch_pitfalls import observe, seeded

# %% [markdown]
# ## The broken code
# Two sequences of 2-D vectors, of lengths 3 and 1, padded into one `(batch, seq, feature)`
# tensor. The function returns the final hidden state of each sequence in the padded batch,
# and, for comparison, what the same GRU ends in when each sequence is run alone.

# %%
LENGTHS = [3, 1]


def gru_and_sequences(device):
    with seeded(0):
        gru = nn.GRU(input_size=2, hidden_size=3, batch_first=True)
        seqs = [torch.randn(n, 2) for n in LENGTHS]
    return gru.to(device), [s.to(device) for s in seqs]


def each_alone(gru, seqs):
    with torch.no_grad():
        return torch.stack([gru(s.unsqueeze(0))[1][-1, 0] for s in seqs])


def broken(device):
    gru, seqs = gru_and_sequences(device)
    padded = pad_sequence(seqs, batch_first=True)  # (2, 3, 2); the short one ends in zeros
    with torch.no_grad():
        _, h_n = gru(padded)
    return {"batched": h_n[-1], "alone": each_alone(gru, seqs)}


# %%
if __name__ == "__main__":
    print(observe(broken, "cpu"))

# %% [markdown]
# ## Why
# An RNN has no idea which time steps are padding: a zero vector is an input like any other.
# The GRU updates its state at every step of the padded tensor, so a sequence of length 1
# padded to 3 gets two extra updates, driven by the biases and by the state itself, and `h_n`
# is the state after step 3, not after step 1. Where the padding goes makes no difference to
# the principle (padding in front changes the start state instead), and a mask applied to the
# *outputs* afterwards does not help `h_n`, which was computed through the padding. Only the
# longest sequence in the batch comes out right, which is why the bug hides: the result
# depends on what else is in the batch.
#
# ## The fix
# Tell the RNN the lengths: `pack_padded_sequence(padded, lengths, batch_first=True,
# enforce_sorted=False)` builds a `PackedSequence` that runs each sequence only over its own
# steps (`lengths` must be a list or a CPU tensor). `h_n` is then each sequence's state after
# its own last step, returned in the original batch order; `pad_packed_sequence` turns the
# per-step outputs back into a padded tensor if they are needed. The check compares `h_n`
# with each sequence run alone.


# %%
def fixed(device):
    gru, seqs = gru_and_sequences(device)
    padded = pad_sequence(seqs, batch_first=True)
    packed = pack_padded_sequence(padded, LENGTHS, batch_first=True, enforce_sorted=False)
    with torch.no_grad():
        _, h_n = gru(packed)
    return {"batched": h_n[-1], "alone": each_alone(gru, seqs)}


# %%
if __name__ == "__main__":
    print(observe(fixed, "cpu"))

# %% [markdown]
# ## Where it comes from
# The Stack Overflow question "Why do we 'pack' the sequences in PyTorch?" explains what
# packing does: the RNN is told how many sequences are still running at each time step, so each
# one is processed over its own steps only (the answers dwell on the computation it saves). The
# PyTorch forum thread "Why do we need to pack padded batches of sequences in Pytorch?", asked
# about the chatbot tutorial's encoder, states the other half: the padding must not be
# processed by the RNN. Daniel Voigt Godoy's book "Deep Learning with PyTorch Step-by-Step"
# (chapter 8, "Sequences") shows the hidden state moving over zero padding through the bias
# terms, and packing as the way to stop it. The `pack_padded_sequence` documentation describes
# `lengths` and the `enforce_sorted=False` option (added in 1.1; before, the batch had to be
# sorted by decreasing length). An unpacked padded batch is plain recurrence, unchanged in every
# release; the matrix observes it from 1.13.1 on.

# %% [markdown]
# ## How the harness checks it
# A batched result that differs from the run alone is not always this pitfall: a 2-layer GRU
# with dropout between layers, left in training mode, differs for *every* sequence, the full
# length one included. The symptom asks for the padding's signature: the longest sequence
# matches its run alone, and a shorter one does not.

# %% tags=["hide-cell"]
from torch_pitfalls import Affects, Case, Source


def symptom(run):
    """The full-length sequence's final state matches its run alone; a shorter one's does not:
    the padding steps were run through."""
    if run.error is not None:
        return False
    batched, alone = run.value["batched"].cpu(), run.value["alone"].cpu()
    longest = max(range(len(LENGTHS)), key=LENGTHS.__getitem__)
    shorter = [i for i in range(len(LENGTHS)) if LENGTHS[i] < LENGTHS[longest]]
    return torch.allclose(batched[longest], alone[longest], atol=1e-5) and any(
        not torch.allclose(batched[i], alone[i], atol=1e-5) for i in shorter
    )


def near_miss(device):
    """Packed correctly, but a 2-layer GRU with dropout, left in training mode: every state
    differs from its run alone, the longest one too."""
    with seeded(0):
        gru = nn.GRU(input_size=2, hidden_size=3, num_layers=2, dropout=0.5, batch_first=True).to(device)
        seqs = [torch.randn(n, 2).to(device) for n in LENGTHS]
        packed = pack_padded_sequence(
            pad_sequence(seqs, batch_first=True), LENGTHS, batch_first=True, enforce_sorted=False
        )
        with torch.no_grad():
            _, h_n = gru(packed)
            alone = torch.stack([gru(s.unsqueeze(0))[1][-1, 0] for s in seqs])
    return {"batched": h_n[-1], "alone": alone}


def check(run, device):
    """Each final state equals that sequence's state after its own last step, from a run of the
    sequence alone, computed here from a fresh copy of the same GRU."""
    assert run.error is None, f"raised {run.error!r}"
    gru, seqs = gru_and_sequences(device)
    torch.testing.assert_close(run.value["batched"], each_alone(gru, seqs))


CASE = Case(
    id="padded-sequences-without-packing",
    title="Padded sequences fed to an RNN without packing",
    kind="silent",
    symptom_category="wrong-values",
    symptom_line="A short sequence's final hidden state changes with the padding added to it.",
    # A recurrence over every time step it is given: no release is known to change it.
    # The fix uses enforce_sorted=False (1.1 on), available on every release of the matrix.
    affects=(Affects("*", reason="an RNN runs over every time step it is given; no release changes it"),),
    devices=("cpu", "cuda"),
    sources=(
        Source(
            title='Stack Overflow: Why do we "pack" the sequences in PyTorch?',
            url="https://stackoverflow.com/questions/51030782/why-do-we-pack-the-sequences-in-pytorch",
        ),
        Source(
            title="PyTorch Forums: Why do we need to pack padded batches of sequences in Pytorch?",
            url="https://discuss.pytorch.org/t/why-do-we-need-to-pack-padded-batches-of-sequences-in-pytorch/47977",
        ),
        Source(
            title="PyTorch documentation: torch.nn.utils.rnn.pack_padded_sequence",
            url="https://docs.pytorch.org/docs/stable/generated/torch.nn.utils.rnn.pack_padded_sequence.html",
        ),
    ),
    tags=("shapes", "rnn", "padding", "pack_padded_sequence"),
    references=("https://docs.pytorch.org/docs/stable/generated/torch.nn.GRU.html",),
)
