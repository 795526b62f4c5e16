"""Predict the customer satisfaction score (CSAT, 1 to 5 stars) a support chat will receive,
from the transcript of the agent's and customer's messages.
"""
import argparse
import json
import random
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pack_padded_sequence
from torch.utils.data import DataLoader, Dataset

STARS = [1, 2, 3, 4, 5]
PAD, UNK = 0, 1


class Chats(Dataset):
    def __init__(self, rows, vocab, max_tokens=400):
        self.rows, self.vocab, self.max_tokens = rows, vocab, max_tokens

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        words = " ".join(m["text"] for m in row["messages"]).lower().split()[-self.max_tokens:]
        ids = [self.vocab.get(w, UNK) for w in words] or [UNK]
        return torch.tensor(ids, dtype=torch.long), STARS.index(row["csat"])


def collate(batch):
    lengths = torch.tensor([len(ids) for ids, _ in batch], dtype=torch.long)
    tokens = torch.full((len(batch), int(lengths.max())), PAD, dtype=torch.long)
    for k, (ids, _) in enumerate(batch):
        tokens[k, : len(ids)] = ids
    return tokens, lengths, torch.tensor([y for _, y in batch], dtype=torch.long)


class CsatGRU(nn.Module):
    def __init__(self, vocab_size, n_classes, dim=128, hidden=128):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.gru = nn.GRU(dim, hidden, batch_first=True, bidirectional=True)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(2 * hidden, n_classes)

    def forward(self, tokens, lengths):
        packed = pack_padded_sequence(self.embed(tokens), lengths.cpu(), batch_first=True, enforce_sorted=False)
        _, h = self.gru(packed)
        return F.log_softmax(self.fc(self.drop(torch.cat([h[-2], h[-1]], dim=1))), dim=1)


def evaluate(model, loader, device):
    model.eval()
    nll, correct, n, abs_err = 0.0, 0, 0, 0.0
    with torch.no_grad():
        for tokens, lengths, y in loader:
            log_probs = model(tokens.to(device), lengths)
            y = y.to(device)
            nll += F.nll_loss(log_probs, y, reduction="sum").item()
            pred = log_probs.argmax(dim=1)
            correct += (pred == y).sum().item()
            abs_err += (pred - y).abs().sum().item()
            n += len(y)
    return nll / n, correct / n, abs_err / n


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/chats_train.jsonl")
    ap.add_argument("--valid", default="data/chats_valid.jsonl")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="csat_gru.pt")
    args = ap.parse_args(argv)

    random.seed(3)
    np.random.seed(3)
    torch.manual_seed(3)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.train) as fh:
        train_rows = [json.loads(line) for line in fh]
    with open(args.valid) as fh:
        valid_rows = [json.loads(line) for line in fh]
    counts = Counter(w for r in train_rows for m in r["messages"] for w in m["text"].lower().split())
    vocab = {w: i + 2 for i, (w, c) in enumerate(counts.most_common(30000)) if c >= 2}
    train_dl = DataLoader(Chats(train_rows, vocab), batch_size=args.batch_size, shuffle=True, collate_fn=collate)
    valid_dl = DataLoader(Chats(valid_rows, vocab), batch_size=256, collate_fn=collate)

    model = CsatGRU(len(vocab) + 2, len(STARS)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = float("inf")
    for epoch in range(args.epochs):
        model.train()
        for tokens, lengths, y in train_dl:
            log_probs = model(tokens.to(device), lengths)
            loss = F.nll_loss(log_probs, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 2.0)
            optimizer.step()
        nll, acc, mae = evaluate(model, valid_dl, device)
        print(f"epoch {epoch}: valid nll {nll:.4f} acc {acc:.3f} star MAE {mae:.3f}")
        if nll < best:
            best = nll
            torch.save({"model": model.state_dict(), "vocab": vocab, "stars": STARS}, args.out)


if __name__ == "__main__":
    main()
