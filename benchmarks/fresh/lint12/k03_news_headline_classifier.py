"""fastText-style topic classifier for AG News (World, Sports, Business, Sci/Tech).

train.csv / test.csv rows: "class index","title","description", class index in 1..4.
"""
import csv
import random
import re
import zlib
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CONFIG = {
    "train_csv": "data/ag_news/train.csv",
    "test_csv": "data/ag_news/test.csv",
    "min_count": 3,
    "ngram_buckets": 500_000,
    "embed_dim": 128,
    "hidden": 256,
    "num_classes": 4,
    "batch_size": 64,
    "epochs": 5,
    "lr": 1e-3,
    "seed": 13,
}

TOKEN = re.compile(r"[a-z0-9']+")


def tokenize(text):
    return TOKEN.findall(text.lower())


def read_split(path):
    with open(path, newline="", encoding="utf-8") as f:
        return [(int(label) - 1, f"{title} {desc}") for label, title, desc in csv.reader(f)]


class Vocab:
    def __init__(self, texts, min_count, buckets):
        counts = Counter(tok for t in texts for tok in tokenize(t))
        self.itos = ["<unk>"] + sorted(w for w, c in counts.items() if c >= min_count)
        self.stoi = {w: i for i, w in enumerate(self.itos)}
        self.buckets = buckets

    def __len__(self):
        return len(self.itos) + self.buckets

    def encode(self, text):
        words = tokenize(text)
        ids = [self.stoi.get(w, 0) for w in words]
        pairs = (f"{a} {b}".encode() for a, b in zip(words, words[1:]))
        bigrams = [len(self.itos) + zlib.crc32(p) % self.buckets for p in pairs]
        return ids + bigrams or [0]


class Headlines(Dataset):
    def __init__(self, rows, vocab):
        self.items = [(torch.tensor(vocab.encode(text)), label) for label, text in rows]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]


def collate(batch):
    ids = [tokens for tokens, _ in batch]
    lengths = torch.tensor([len(t) for t in ids])
    offsets = torch.cat([torch.zeros(1, dtype=torch.long), lengths.cumsum(0)[:-1]])
    labels = torch.Tensor([label for _, label in batch])
    return torch.cat(ids), offsets, labels


class BagOfNgrams(nn.Module):
    def __init__(self, vocab_size, dim, hidden, num_classes):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.hidden = nn.Sequential(nn.Linear(dim, hidden), nn.GELU(), nn.LayerNorm(hidden))
        self.W_out = nn.Parameter(torch.randn(hidden, num_classes))
        self.b_out = nn.Parameter(torch.zeros(num_classes))
        nn.init.uniform_(self.embed.weight, -0.05, 0.05)

    def forward(self, ids, offsets):
        h = self.hidden(self.embed(ids, offsets))
        return h @ self.W_out + self.b_out


def evaluate(model, loader, device):
    model.eval()
    correct = total = 0
    loss_sum = 0.0
    with torch.no_grad():
        for ids, offsets, labels in loader:
            ids, offsets, labels = ids.to(device), offsets.to(device), labels.to(device)
            logits = model(ids, offsets)
            loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
            correct += (logits.argmax(1) == labels).sum().item()
            total += labels.numel()
    return loss_sum / total, correct / total


def main(cfg=CONFIG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_rows, test_rows = read_split(cfg["train_csv"]), read_split(cfg["test_csv"])
    vocab = Vocab([t for _, t in train_rows], cfg["min_count"], cfg["ngram_buckets"])
    train_dl = DataLoader(Headlines(train_rows, vocab), batch_size=cfg["batch_size"],
                          shuffle=True, collate_fn=collate)
    test_dl = DataLoader(Headlines(test_rows, vocab), batch_size=1024, collate_fn=collate)

    model = BagOfNgrams(len(vocab), cfg["embed_dim"], cfg["hidden"], cfg["num_classes"]).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    criterion = nn.CrossEntropyLoss()

    for epoch in range(cfg["epochs"]):
        model.train()
        running, seen = 0.0, 0
        for step, (ids, offsets, labels) in enumerate(train_dl):
            ids, offsets, labels = ids.to(device), offsets.to(device), labels.to(device)
            loss = criterion(model(ids, offsets), labels)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * labels.numel()
            seen += labels.numel()
            if step % 500 == 0:
                print(f"epoch {epoch} step {step} loss {running / seen:.4f}")
        test_loss, test_acc = evaluate(model, test_dl, device)
        print(f"epoch {epoch}: train {running / seen:.4f} test {test_loss:.4f} acc {test_acc:.4f}")
    torch.save({"model": model.state_dict(), "itos": vocab.itos}, "ag_news_bag.pt")


if __name__ == "__main__":
    main()
