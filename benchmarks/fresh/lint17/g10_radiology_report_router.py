"""Route dictated radiology reports to the right subspecialty reading queue (12 queues).

A word-level text CNN over pre-tokenised report text. The model returns class probabilities,
which the worklist tool displays next to each report.
"""
import argparse
import json
import random
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PAD, UNK = 0, 1


def read_jsonl(path):
    with open(path, encoding="utf-8") as fh:
        return [json.loads(line) for line in fh]


def build_vocab(texts, min_count=2, max_size=50000):
    counts = Counter(w for t in texts for w in t.lower().split())
    words = [w for w, c in counts.most_common(max_size) if c >= min_count]
    return {w: i + 2 for i, w in enumerate(words)}


class Reports(Dataset):
    def __init__(self, records, vocab, label_index, max_len=256):
        self.records = records
        self.vocab = vocab
        self.label_index = label_index
        self.max_len = max_len

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        rec = self.records[i]
        ids = [self.vocab.get(w, UNK) for w in rec["text"].lower().split()][: self.max_len] or [UNK]
        return torch.tensor(ids, dtype=torch.long), self.label_index[rec["subspecialty"]]


def pad_batch(batch):
    longest = max(len(ids) for ids, _ in batch)
    tokens = torch.full((len(batch), max(longest, 5)), PAD, dtype=torch.long)
    for k, (ids, _) in enumerate(batch):
        tokens[k, : len(ids)] = ids
    return tokens, torch.tensor([y for _, y in batch], dtype=torch.long)


class ReportCNN(nn.Module):
    def __init__(self, vocab_size, n_classes, dim=200, filters=128, widths=(3, 4, 5)):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=PAD)
        self.convs = nn.ModuleList(nn.Conv1d(dim, filters, w, padding=w // 2) for w in widths)
        self.drop = nn.Dropout(0.3)
        self.fc = nn.Linear(filters * len(widths), n_classes)

    def forward(self, tokens):
        mask = (tokens != PAD).unsqueeze(1)
        h = self.embed(tokens).transpose(1, 2)
        pooled = []
        for conv in self.convs:
            c = F.relu(conv(h))[..., : tokens.size(1)]
            pooled.append(c.masked_fill(~mask, float("-inf")).amax(dim=-1))
        logits = self.fc(self.drop(torch.cat(pooled, dim=1)))
        return F.softmax(logits, dim=-1)


def inverse_frequency(labels, n_classes, device):
    counts = np.bincount(labels, minlength=n_classes).astype(np.float32)
    weights = counts.sum() / (n_classes * np.maximum(counts, 1.0))
    return torch.tensor(weights, dtype=torch.float32, device=device)


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for tokens, labels in loader:
            probs = model(tokens.to(device))
            correct += (probs.argmax(dim=1).cpu() == labels).sum().item()
            total += len(labels)
    return correct / max(total, 1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/reports_train.jsonl")
    ap.add_argument("--valid", default="data/reports_valid.jsonl")
    ap.add_argument("--epochs", type=int, default=10)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--out", default="report_router.pt")
    args = ap.parse_args(argv)

    random.seed(13)
    np.random.seed(13)
    torch.manual_seed(13)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_recs, valid_recs = read_jsonl(args.train), read_jsonl(args.valid)
    labels = sorted({r["subspecialty"] for r in train_recs})
    label_index = {c: i for i, c in enumerate(labels)}
    vocab = build_vocab(r["text"] for r in train_recs)
    train_dl = DataLoader(Reports(train_recs, vocab, label_index), batch_size=args.batch_size,
                          shuffle=True, collate_fn=pad_batch)
    valid_dl = DataLoader(Reports(valid_recs, vocab, label_index), batch_size=256, collate_fn=pad_batch)

    model = ReportCNN(len(vocab) + 2, len(labels)).to(device)
    weights = inverse_frequency([label_index[r["subspecialty"]] for r in train_recs], len(labels), device)
    criterion = nn.NLLLoss(weight=weights)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        running, seen = 0.0, 0
        for tokens, y in train_dl:
            probs = model(tokens.to(device))
            loss = criterion(probs, y.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * len(y)
            seen += len(y)
        acc = evaluate(model, valid_dl, device)
        print(f"epoch {epoch}: loss {running / seen:.4f} valid acc {acc:.3f}")
        if acc > best:
            best = acc
            torch.save({"model": model.state_dict(), "vocab": vocab, "labels": labels}, args.out)


if __name__ == "__main__":
    main()
