"""Character-level language model trained on a single plain-text corpus.

    python t01_char_lm.py --data data/shakespeare.txt --epochs 10 --bptt 128
"""
import argparse
import math
import time
from pathlib import Path

import torch
import torch.nn as nn
import torch.nn.functional as F


def load_corpus(path):
    text = Path(path).read_text(encoding="utf-8")
    chars = sorted(set(text))
    stoi = {ch: i for i, ch in enumerate(chars)}
    ids = torch.tensor([stoi[ch] for ch in text], dtype=torch.long)
    return ids, chars


def batchify(ids, n_streams, device):
    steps = ids.size(0) // n_streams
    ids = ids[: steps * n_streams]
    return ids.view(n_streams, steps).t().contiguous().to(device)  # (time, streams)


class CharLSTM(nn.Module):
    def __init__(self, vocab, emb_dim=128, hidden=512, layers=2, dropout=0.2):
        super().__init__()
        self.embed = nn.Embedding(vocab, emb_dim)
        self.lstm = nn.LSTM(emb_dim, hidden, num_layers=layers, dropout=dropout)
        self.drop = nn.Dropout(dropout)
        self.decoder = nn.Linear(hidden, vocab)
        self.layers, self.hidden = layers, hidden

    def zero_state(self, n_streams, device):
        shape = (self.layers, n_streams, self.hidden)
        return torch.zeros(shape, device=device), torch.zeros(shape, device=device)

    def forward(self, tokens, state):
        out, state = self.lstm(self.drop(self.embed(tokens)), state)
        return self.decoder(self.drop(out)), state


def window(source, start, bptt):
    length = min(bptt, source.size(0) - 1 - start)
    return source[start : start + length], source[start + 1 : start + 1 + length]


def run_epoch(model, stream, optimizer, cfg, device):
    model.train()
    state = model.zero_state(stream.size(1), device)
    total, n_tokens = 0.0, 0
    for start in range(0, stream.size(0) - 1, cfg.bptt):
        inputs, targets = window(stream, start, cfg.bptt)
        optimizer.zero_grad()
        logits, state = model(inputs, state)
        loss = F.cross_entropy(logits.view(-1, logits.size(-1)), targets.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), cfg.clip)
        optimizer.step()
        total += loss.item() * targets.numel()
        n_tokens += targets.numel()
    return total / n_tokens


@torch.no_grad()
def evaluate(model, stream, bptt, device):
    model.eval()
    state = model.zero_state(stream.size(1), device)
    total, n_tokens = 0.0, 0
    for start in range(0, stream.size(0) - 1, bptt):
        inputs, targets = window(stream, start, bptt)
        logits, state = model(inputs, state)
        flat = logits.view(-1, logits.size(-1))
        total += F.cross_entropy(flat, targets.reshape(-1), reduction="sum").item()
        n_tokens += targets.numel()
    return total / n_tokens


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", required=True)
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--bptt", type=int, default=128)
    parser.add_argument("--streams", type=int, default=64)
    parser.add_argument("--lr", type=float, default=2e-3)
    parser.add_argument("--clip", type=float, default=1.0)
    parser.add_argument("--seed", type=int, default=1234)
    parser.add_argument("--out", default="char_lstm.pt")
    cfg = parser.parse_args()

    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ids, chars = load_corpus(cfg.data)
    cut = int(0.9 * ids.size(0))
    train_stream = batchify(ids[:cut], cfg.streams, device)
    valid_stream = batchify(ids[cut:], 8, device)

    model = CharLSTM(len(chars)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    best = math.inf
    for epoch in range(1, cfg.epochs + 1):
        t0 = time.time()
        train_loss = run_epoch(model, train_stream, optimizer, cfg, device)
        val_loss = evaluate(model, valid_stream, cfg.bptt, device)
        print(
            f"epoch {epoch:3d} | {time.time() - t0:6.1f}s | train bpc {train_loss / math.log(2):.3f}"
            f" | valid bpc {val_loss / math.log(2):.3f}"
        )
        if val_loss < best:
            best = val_loss
            torch.save({"model": model.state_dict(), "chars": chars}, cfg.out)


if __name__ == "__main__":
    main()
