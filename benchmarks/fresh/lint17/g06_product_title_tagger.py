"""Tag marketplace product titles with catalogue attributes ("waterproof", "kids", "organic", ...).

A title can carry any number of tags. Titles are hashed into word and character-trigram
buckets and averaged with an EmbeddingBag, followed by a small MLP.
"""
import argparse
import json
import random
import zlib

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

LOSSES = {
    "cross_entropy": nn.CrossEntropyLoss,
    "bce": nn.BCEWithLogitsLoss,
}
DEFAULTS = {"buckets": 2 ** 18, "dim": 128, "hidden": 256, "criterion": "cross_entropy", "threshold": 0.5}


def hashed_features(title, buckets):
    words = title.lower().split()
    grams = words + [w[i:i + 3] for w in words for i in range(max(len(w) - 2, 1))]
    return [zlib.crc32(g.encode()) % buckets for g in grams] or [0]


class TitleTags(Dataset):
    def __init__(self, path, tag_vocab, buckets):
        with open(path) as fh:
            self.items = [json.loads(line) for line in fh]
        self.tag_index = {t: i for i, t in enumerate(tag_vocab)}
        self.buckets = buckets

    def __len__(self):
        return len(self.items)

    def encode_tags(self, tags):
        target = torch.zeros(len(self.tag_index))
        for t in tags:
            if t in self.tag_index:
                target[self.tag_index[t]] = 1.0
        return target

    def __getitem__(self, i):
        item = self.items[i]
        ids = torch.tensor(hashed_features(item["title"], self.buckets), dtype=torch.long)
        return ids, self.encode_tags(item["tags"])


def collate(batch):
    ids = [b[0] for b in batch]
    offsets = torch.tensor([0] + [len(x) for x in ids[:-1]]).cumsum(0)
    return torch.cat(ids), offsets, torch.stack([b[1] for b in batch])


class Tagger(nn.Module):
    def __init__(self, buckets, dim, hidden, n_tags):
        super().__init__()
        self.bag = nn.EmbeddingBag(buckets, dim, mode="mean")
        self.mlp = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(0.2), nn.Linear(hidden, n_tags))

    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets))


def evaluate(model, loader, threshold, device):
    model.eval()
    tp = fp = fn = 0.0
    with torch.no_grad():
        for ids, offsets, target in loader:
            scores = model(ids.to(device), offsets.to(device)).softmax(dim=-1).cpu()
            pred = (scores > threshold).float()
            tp += (pred * target).sum().item()
            fp += (pred * (1 - target)).sum().item()
            fn += ((1 - pred) * target).sum().item()
    return 2 * tp / max(2 * tp + fp + fn, 1.0)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/titles_train.jsonl")
    ap.add_argument("--valid", default="data/titles_valid.jsonl")
    ap.add_argument("--tags", default="data/tag_vocab.json")
    ap.add_argument("--config", default=None, help="JSON file overriding DEFAULTS")
    ap.add_argument("--epochs", type=int, default=8)
    ap.add_argument("--lr", type=float, default=2e-3)
    ap.add_argument("--out", default="tagger.pt")
    args = ap.parse_args(argv)
    cfg = dict(DEFAULTS)
    if args.config:
        with open(args.config) as fh:
            cfg.update(json.load(fh))

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    with open(args.tags) as fh:
        tag_vocab = json.load(fh)
    train_set = TitleTags(args.train, tag_vocab, cfg["buckets"])
    valid_set = TitleTags(args.valid, tag_vocab, cfg["buckets"])
    train_dl = DataLoader(train_set, batch_size=128, shuffle=True, collate_fn=collate)
    valid_dl = DataLoader(valid_set, batch_size=512, collate_fn=collate)

    model = Tagger(cfg["buckets"], cfg["dim"], cfg["hidden"], len(tag_vocab)).to(device)
    criterion = LOSSES[cfg["criterion"]]()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best = -1.0
    for epoch in range(args.epochs):
        model.train()
        for ids, offsets, target in train_dl:
            logits = model(ids.to(device), offsets.to(device))
            loss = criterion(logits, target.to(device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        f1 = evaluate(model, valid_dl, cfg["threshold"], device)
        print(f"epoch {epoch}: micro-F1 {f1:.4f}")
        if f1 > best:
            best = f1
            torch.save({"model": model.state_dict(), "tags": tag_vocab, "config": cfg}, args.out)


if __name__ == "__main__":
    main()
