"""Character-level LSTM language model on a plain-text corpus, trained with truncated
backpropagation through time over one long stream per batch row."""

import math
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402

BPTT, BATCH, EMB, HIDDEN, LAYERS = 128, 64, 128, 1024, 3
LR, EPOCHS, MAX_NORM = 2e-3, 20, 1.0


class CharLSTM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, EMB)
        self.rnn = nn.LSTM(EMB, HIDDEN, LAYERS, batch_first=True, dropout=0.25)
        self.proj = nn.Linear(HIDDEN, vocab)

    def forward(self, x, state=None):
        out, state = self.rnn(self.embed(x), state)
        return self.proj(out), state


def batchify(ids, batch):
    n = ids.numel() // batch
    return ids[: n * batch].view(batch, n)  # each row is a contiguous stream


def evaluate(model, data, device):
    model.eval()
    total, count, state = 0.0, 0, None
    with torch.no_grad():
        for i in range(0, data.size(1) - 1, BPTT):
            x = data[:, i:i + BPTT].to(device)
            y = data[:, i + 1:i + 1 + BPTT].to(device)
            x = x[:, : y.size(1)]
            logits, state = model(x, state)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    return total / count


def main(path):
    text = open(path, encoding="utf-8").read()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(0.95 * ids.numel())
    train, valid = batchify(ids[:split], BATCH), batchify(ids[split:], 8)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = CharLSTM(len(chars)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    history = []
    for epoch in range(EPOCHS):
        model.train()
        state = None
        for i in range(0, train.size(1) - 1 - BPTT, BPTT):
            x = train[:, i:i + BPTT].to(device)
            y = train[:, i + 1:i + 1 + BPTT].to(device)
            if state is not None:
                state = tuple(s.detach() for s in state)
            logits, state = model(x, state)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            torch.nn.utils.clip_grad_norm_(model.parameters(), MAX_NORM)
            history.append(loss)
        val = evaluate(model, valid, device)
        recent = torch.stack(history[-200:]).mean().item()
        print(f"epoch {epoch}: train {recent:.3f} valid {val:.3f} nats/char (ppl {math.exp(val):.2f})")

    plt.plot([h.item() for h in history])
    plt.xlabel("step")
    plt.ylabel("cross-entropy")
    plt.savefig("char_lstm_loss.png")
    torch.save({"model": model.state_dict(), "chars": chars}, "char_lstm.pt")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/corpus.txt")
