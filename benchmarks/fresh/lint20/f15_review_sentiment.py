import argparse
import json
import re
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader

TOKEN = re.compile(r"[a-z']+")


def read_reviews(path):
    with open(path) as fh:
        rows = [json.loads(line) for line in fh]
    return [TOKEN.findall(r["text"].lower()) for r in rows], [1.0 if r["stars"] >= 4 else 0.0 for r in rows]


def build_vocab(docs, min_count=3):
    counts = Counter(tok for doc in docs for tok in doc)
    return {tok: i + 1 for i, tok in enumerate(t for t, c in counts.most_common() if c >= min_count)}


def make_collate(vocab):
    def collate(batch):
        ids, offsets, labels = [], [0], []
        for tokens, label in batch:
            seq = [vocab.get(t, 0) for t in tokens] or [0]
            ids.extend(seq)
            offsets.append(offsets[-1] + len(seq))
            labels.append(label)
        return torch.tensor(ids), torch.tensor(offsets[:-1]), torch.tensor(labels)
    return collate


class BagClassifier(nn.Module):
    def __init__(self, vocab_size, dim=64):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size + 1, dim, mode="mean")
        self.out = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

    def forward(self, ids, offsets):
        return self.out(self.bag(ids, offsets)).squeeze(-1)


class RunningMetrics:
    def __init__(self):
        self.scores, self.labels = [], []

    def update(self, logits, labels):
        self.scores.append(torch.sigmoid(logits).cpu().numpy())
        self.labels.append(labels.cpu().numpy())

    def compute(self):
        scores, labels = np.concatenate(self.scores), np.concatenate(self.labels)
        pred = scores > 0.5
        return {"acc": float((pred == labels).mean()), "pos_rate": float(pred.mean())}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="reviews_train.jsonl")
    parser.add_argument("--test", default="reviews_test.jsonl")
    parser.add_argument("--epochs", type=int, default=8)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_docs, train_y = read_reviews(args.train)
    test_docs, test_y = read_reviews(args.test)
    vocab = build_vocab(train_docs)
    collate = make_collate(vocab)
    train_loader = DataLoader(list(zip(train_docs, train_y)), batch_size=64, shuffle=True, collate_fn=collate)
    test_loader = DataLoader(list(zip(test_docs, test_y)), batch_size=256, collate_fn=collate)
    model = BagClassifier(len(vocab)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=2e-3)
    criterion = nn.BCEWithLogitsLoss()
    for epoch in range(args.epochs):
        model.train()
        train_metrics = RunningMetrics()
        for ids, offsets, y in train_loader:
            ids, offsets, y = ids.to(device), offsets.to(device), y.to(device)
            logits = model(ids, offsets)
            loss = criterion(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            train_metrics.update(logits, y)
        model.eval()
        test_metrics = RunningMetrics()
        with torch.no_grad():
            for ids, offsets, y in test_loader:
                test_metrics.update(model(ids.to(device), offsets.to(device)), y)
        print(f"epoch {epoch}: train {train_metrics.compute()} test {test_metrics.compute()}")
    torch.save({"model": model.state_dict(), "vocab": vocab}, "review_bag.pt")


if __name__ == "__main__":
    main()
