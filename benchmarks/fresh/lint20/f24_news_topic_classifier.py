import argparse
import csv
import re
from collections import Counter

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn.utils.rnn import pad_sequence
from torch.utils.data import DataLoader

TOPICS = ["world", "business", "science", "sports", "health", "entertainment", "politics", "technology"]
WORD = re.compile(r"\w+")


def read_articles(path):
    with open(path, newline="", encoding="utf-8") as fh:
        rows = list(csv.DictReader(fh))
    return [(WORD.findall((r["title"] + " " + r["body"]).lower())[:400], TOPICS.index(r["topic"])) for r in rows]


class Vocab:
    def __init__(self, docs, size=30000):
        common = Counter(w for doc, _ in docs for w in doc).most_common(size - 2)
        self.index = {w: i + 2 for i, (w, _) in enumerate(common)}

    def encode(self, words):
        return torch.tensor([self.index.get(w, 1) for w in words] or [1])


def collate_with(vocab):
    def collate(batch):
        seqs = [vocab.encode(words) for words, _ in batch]
        return pad_sequence(seqs, batch_first=True, padding_value=0), torch.tensor([t for _, t in batch])
    return collate


class MeanPoolClassifier(nn.Module):
    def __init__(self, vocab_size, dim=128, n_topics=len(TOPICS)):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.GELU(), nn.Dropout(0.2), nn.Linear(dim, n_topics))

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).float()
        pooled = (self.embed(ids) * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        return self.mlp(pooled)


def evaluate(model, loader, device):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    for ids, topic in loader:
        ids, topic = ids.to(device), topic.to(device)
        logits = model(ids)
        loss_sum += F.cross_entropy(logits, topic, reduction="sum").item()
        correct += (logits.argmax(dim=1) == topic).sum().item()
        n += len(topic)
    return loss_sum / n, correct / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="news_train.csv")
    parser.add_argument("--dev", default="news_dev.csv")
    parser.add_argument("--epochs", type=int, default=10)
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_docs, dev_docs = read_articles(args.train), read_articles(args.dev)
    vocab = Vocab(train_docs)
    train_loader = DataLoader(train_docs, batch_size=args.batch_size, shuffle=True, collate_fn=collate_with(vocab))
    dev_loader = DataLoader(dev_docs, batch_size=512, collate_fn=collate_with(vocab))
    model = MeanPoolClassifier(len(vocab.index) + 2).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    best_acc = 0.0
    for epoch in range(args.epochs):
        model.train()
        for ids, topic in train_loader:
            ids, topic = ids.to(device), topic.to(device)
            loss = F.cross_entropy(model(ids), topic)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        dev_loss, dev_acc = evaluate(model, dev_loader, device)
        print(f"epoch {epoch}: dev loss {dev_loss:.4f} dev acc {dev_acc:.4f}")
        if dev_acc > best_acc:
            best_acc = dev_acc
            torch.save({"model": model.state_dict(), "vocab": vocab.index}, "news_topics.pt")


if __name__ == "__main__":
    main()
