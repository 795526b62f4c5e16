"""Character-level LSTM language model on a plain-text corpus (e.g. enwik8 / tiny Shakespeare).

The corpus is split into BATCH parallel streams; each training step reads the next BPTT
characters of every stream, and the LSTM keeps its memory from one window to the next.
"""
import math
import random
import time
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

CORPUS = Path("data/shakespeare.txt")
OUT = Path("runs/char_lstm.pt")
BATCH = 64
BPTT = 128
EMBED = 128
HIDDEN = 512
LAYERS = 2
DROPOUT = 0.2
LR = 2e-3
EPOCHS = 20
CLIP = 1.0
VAL_FRACTION = 0.05
SEED = 1234


class StatefulCharLSTM(nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed = nn.Embedding(vocab, EMBED)
        self.lstm = nn.LSTM(EMBED, HIDDEN, num_layers=LAYERS, dropout=DROPOUT, batch_first=True)
        self.drop = nn.Dropout(DROPOUT)
        self.decoder = nn.Linear(HIDDEN, vocab)
        self.state = None

    def reset_state(self):
        self.state = None

    def forward(self, tokens):
        out, self.state = self.lstm(self.embed(tokens), self.state)
        return self.decoder(self.drop(out))


def build_vocab(text):
    chars = sorted(set(text))
    return chars, {c: i for i, c in enumerate(chars)}


def batchify(ids, n_streams, device):
    n = ids.numel() // n_streams
    return ids[: n * n_streams].view(n_streams, n).to(device)


def windows(data):
    for start in range(0, data.size(1) - 1, BPTT):
        end = min(start + BPTT, data.size(1) - 1)
        yield data[:, start:end], data[:, start + 1 : end + 1]


def evaluate(model, data):
    model.eval()
    model.reset_state()
    total, count = 0.0, 0
    with torch.no_grad():
        for x, y in windows(data):
            logits = model(x)
            total += F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1), reduction="sum").item()
            count += y.numel()
    return total / count


def sample(model, stoi, itos, prompt, length, device, temperature=0.8):
    model.eval()
    model.reset_state()
    ids = torch.tensor([[stoi[c] for c in prompt]], device=device)
    out = list(prompt)
    with torch.no_grad():
        logits = model(ids)[:, -1]
        for _ in range(length):
            nxt = torch.multinomial(F.softmax(logits / temperature, dim=-1), 1)
            out.append(itos[nxt.item()])
            logits = model(nxt)[:, -1]
    return "".join(out)


def main():
    random.seed(SEED)
    np.random.seed(SEED)
    torch.manual_seed(SEED)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    text = CORPUS.read_text(encoding="utf-8")
    itos, stoi = build_vocab(text)
    ids = torch.tensor([stoi[c] for c in text], dtype=torch.long)
    split = int(len(ids) * (1 - VAL_FRACTION))
    train_data = batchify(ids[:split], BATCH, device)
    val_data = batchify(ids[split:], 8, device)

    model = StatefulCharLSTM(len(itos)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=LR)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=1)

    best = math.inf
    for epoch in range(1, EPOCHS + 1):
        model.train()
        model.reset_state()
        epoch_losses = []
        t0 = time.time()
        for step, (x, y) in enumerate(windows(train_data)):
            logits = model(x)
            loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), y.reshape(-1))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), CLIP)
            optimizer.step()
            epoch_losses.append(loss)
            if step % 200 == 0:
                print(f"  step {step:5d}  loss {loss.item():.3f}")

        train_loss = torch.stack(epoch_losses).mean().item()
        val_loss = evaluate(model, val_data)
        scheduler.step(val_loss)
        print(f"epoch {epoch}: train bpc {train_loss / math.log(2):.3f}  val bpc {val_loss / math.log(2):.3f}"
              f"  ({time.time() - t0:.0f}s)")
        if val_loss < best:
            best = val_loss
            OUT.parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "itos": itos}, OUT)
        print(sample(model, stoi, itos, "ROMEO:", 200, device))


if __name__ == "__main__":
    main()
