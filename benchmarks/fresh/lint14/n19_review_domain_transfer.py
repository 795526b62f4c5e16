import json
import math
import random
import re
from collections import Counter
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

SETUP = {
    "source": "data/amazon_reviews/books.jsonl",
    "target": "data/amazon_reviews/electronics.jsonl",
    "target_test": "data/amazon_reviews/electronics_test.jsonl",
    "vectors": "data/vectors/glove_300d_subset.npz",
    "min_count": 3, "batch_size": 64, "epochs": 15, "lr": 1e-3, "max_coeff": 1.0, "seed": 99,
}
WORD = re.compile(r"[a-z']+")


def read_reviews(path):
    rows = [json.loads(line) for line in Path(path).read_text().splitlines() if line.strip()]
    return [(WORD.findall(r["text"].lower()), int(r["rating"] >= 4)) for r in rows]


def build_vocab(docs, min_count):
    counts = Counter(tok for toks, _ in docs for tok in toks)
    words = ["<unk>"] + sorted(w for w, c in counts.items() if c >= min_count)
    return {w: i for i, w in enumerate(words)}


def collate(vocab):
    def fn(batch):
        ids, offsets, labels = [], [], []
        for toks, label in batch:
            offsets.append(len(ids))
            ids.extend(vocab.get(t, 0) for t in toks or ["<unk>"])
            labels.append(label)
        return torch.tensor(ids), torch.tensor(offsets), torch.tensor(labels)
    return fn


class ReverseGrad(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x, coeff):
        ctx.coeff = coeff
        return x.view_as(x)

    @staticmethod
    def backward(ctx, grad_output):
        return -ctx.coeff * grad_output, None


class ReviewModel(nn.Module):
    def __init__(self, vocab_size, dim=300, hidden=200):
        super().__init__()
        self.embed = nn.EmbeddingBag(vocab_size, dim, mode="mean")
        self.register_buffer("row_mask", torch.ones(vocab_size, 1))
        self.shared = nn.Sequential(nn.Linear(dim, hidden), nn.ReLU(), nn.Dropout(0.3))
        self.sentiment = nn.Linear(hidden, 2)
        self.domain = nn.Sequential(nn.Linear(hidden, 100), nn.ReLU(), nn.Linear(100, 1))
        self.embed.weight.register_hook(lambda g: g * self.row_mask)

    def load_vectors(self, vocab, path):
        table = np.load(path)
        words, vecs = list(table["words"]), table["vectors"].astype(np.float32)
        index = {w: i for i, w in enumerate(words)}
        hits = [(vocab[w], index[w]) for w in vocab if w in index]
        rows = torch.tensor([r for r, _ in hits])
        with torch.no_grad():
            self.embed.weight[rows] = torch.from_numpy(vecs[[c for _, c in hits]])
            self.row_mask[rows] = 0.0
        return len(hits)

    def forward(self, ids, offsets, coeff=0.0):
        h = self.shared(self.embed(ids, offsets))
        return self.sentiment(h), self.domain(ReverseGrad.apply(h, coeff)).squeeze(1)


def accuracy(model, loader, device):
    model.eval()
    hit = n = 0
    with torch.no_grad():
        for ids, offsets, labels in loader:
            logits, _ = model(ids.to(device), offsets.to(device))
            hit += (logits.argmax(1).cpu() == labels).sum().item()
            n += labels.numel()
    return hit / n


def main(s=SETUP):
    random.seed(s["seed"]); np.random.seed(s["seed"]); torch.manual_seed(s["seed"])
    source, target, test = read_reviews(s["source"]), read_reviews(s["target"]), read_reviews(s["target_test"])
    vocab = build_vocab(source + target, s["min_count"])
    make = lambda docs, shuffle: DataLoader(docs, batch_size=s["batch_size"], shuffle=shuffle,
                                            collate_fn=collate(vocab), drop_last=shuffle)
    src_loader, tgt_loader, test_loader = make(source, True), make(target, True), make(test, False)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = ReviewModel(len(vocab))
    print(f"pretrained rows: {model.load_vectors(vocab, s['vectors'])} of {len(vocab)}")
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=s["lr"])
    steps, step = s["epochs"] * min(len(src_loader), len(tgt_loader)), 0
    for epoch in range(s["epochs"]):
        model.train()
        for (si, soff, sy), (ti, toff, _) in zip(src_loader, tgt_loader):
            coeff = s["max_coeff"] * (2.0 / (1.0 + math.exp(-10.0 * step / steps)) - 1.0)
            logits, d_src = model(si.to(device), soff.to(device), coeff)
            _, d_tgt = model(ti.to(device), toff.to(device), coeff)
            d_logits = torch.cat([d_src, d_tgt])
            d_labels = torch.cat([torch.zeros_like(d_src), torch.ones_like(d_tgt)])
            loss = F.cross_entropy(logits, sy.to(device)) + F.binary_cross_entropy_with_logits(d_logits, d_labels)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            step += 1
        print(f"epoch {epoch:02d} coeff {coeff:.3f} target acc {accuracy(model, test_loader, device):.4f}")


if __name__ == "__main__":
    main()
