"""Clause-type classification for contract provisions (LEDGAR, 100 most frequent labels).

Convolutional encoder over pre-trained 300-d word vectors. Optimisation follows the team's usual
fine-tuning recipe: weight decay 0.01 except on biases and normalisation weights, linear
warm-up over the first 10 % of the steps, then linear decay to zero.
"""
import json
import random
from collections import Counter

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

SETUP = {
    "train": "data/ledgar/train.jsonl",
    "dev": "data/ledgar/dev.jsonl",
    "vectors": "data/ledgar/vectors_300d.npy",
    "vocab": "data/ledgar/vocab.json",
    "max_tokens": 400,
    "kernels": (2, 3, 4, 5),
    "filters": 200,
    "optimizer": {"name": "Adam", "lr": 1e-3, "weight_decay": 0.01, "betas": (0.9, 0.999)},
    "warmup": 0.1,
    "epochs": 10,
    "batch": 64,
    "seed": 31,
}


class Provisions(Dataset):
    def __init__(self, path, vocab, labels, max_tokens):
        with open(path) as f:
            rows = [json.loads(line) for line in f]
        self.ids = [[vocab.get(w, 1) for w in r["provision"].lower().split()[:max_tokens]] or [1] for r in rows]
        self.y = [labels[r["label"]] for r in rows]

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        return torch.tensor(self.ids[i]), self.y[i]


def pad_batch(batch):
    seqs, ys = zip(*batch)
    width = max(8, max(len(s) for s in seqs))
    out = torch.zeros(len(seqs), width, dtype=torch.long)
    for i, s in enumerate(seqs):
        out[i, : len(s)] = s
    return out, torch.tensor(ys)


class ClauseCNN(nn.Module):
    def __init__(self, vectors, n_labels, kernels, filters):
        super().__init__()
        self.embed = nn.Embedding.from_pretrained(torch.from_numpy(vectors), freeze=False, padding_idx=0)
        self.convs = nn.ModuleList(nn.Conv1d(vectors.shape[1], filters, k) for k in kernels)
        self.norm = nn.LayerNorm(filters * len(kernels))
        self.drop = nn.Dropout(0.5)
        self.fc = nn.Linear(filters * len(kernels), n_labels)

    def forward(self, ids):
        pad = (ids == 0).unsqueeze(1)
        e = self.embed(ids).transpose(1, 2)
        pooled = [F.relu(conv(e)).masked_fill(pad[:, :, conv.kernel_size[0] - 1:], 0).amax(dim=2) for conv in self.convs]
        logits = self.fc(self.drop(self.norm(torch.cat(pooled, dim=1))))
        return F.softmax(logits, dim=-1)


def make_optimizer(model, spec):
    spec = dict(spec)
    decay = spec.pop("weight_decay")
    optimizer_cls = getattr(torch.optim, spec.pop("name"))
    groups = [
        {"params": [p for n, p in model.named_parameters() if p.ndim > 1], "weight_decay": decay},
        {"params": [p for n, p in model.named_parameters() if p.ndim <= 1], "weight_decay": 0.0},
    ]
    return optimizer_cls(groups, **spec)


def linear_schedule(optimizer, total, warmup):
    def factor(step):
        return step / max(warmup, 1) if step < warmup else max(0.0, (total - step) / max(total - warmup, 1))
    return torch.optim.lr_scheduler.LambdaLR(optimizer, factor)


def macro_f1(model, loader, n_labels):
    model.eval()
    tp, fp, fn = torch.zeros(n_labels), torch.zeros(n_labels), torch.zeros(n_labels)
    with torch.no_grad():
        for ids, y in loader:
            pred = model(ids).argmax(dim=1)
            tp += torch.bincount(y[pred == y], minlength=n_labels)
            fp += torch.bincount(pred[pred != y], minlength=n_labels)
            fn += torch.bincount(y[pred != y], minlength=n_labels)
    return (2 * tp / (2 * tp + fp + fn).clamp(min=1)).mean().item()


def main(cfg=SETUP):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    with open(cfg["vocab"]) as f:
        vocab = json.load(f)
    with open(cfg["train"]) as f:
        counts = Counter(json.loads(line)["label"] for line in f)
    labels = {name: i for i, (name, _) in enumerate(counts.most_common())}
    train = Provisions(cfg["train"], vocab, labels, cfg["max_tokens"])
    dev = Provisions(cfg["dev"], vocab, labels, cfg["max_tokens"])
    train_loader = DataLoader(train, cfg["batch"], shuffle=True, collate_fn=pad_batch, drop_last=True)
    dev_loader = DataLoader(dev, 256, collate_fn=pad_batch)

    model = ClauseCNN(np.load(cfg["vectors"]).astype(np.float32), len(labels), cfg["kernels"], cfg["filters"])
    freq = torch.tensor([counts[name] for name in labels], dtype=torch.float32)
    criterion = nn.NLLLoss(weight=(freq.sum() / freq) ** 0.5 / ((freq.sum() / freq) ** 0.5).mean())
    optimizer = make_optimizer(model, cfg["optimizer"])
    total = cfg["epochs"] * len(train_loader)
    scheduler = linear_schedule(optimizer, total, int(cfg["warmup"] * total))

    for epoch in range(cfg["epochs"]):
        model.train()
        for ids, y in train_loader:
            optimizer.zero_grad()
            loss = criterion(model(ids), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            scheduler.step()
        print(f"epoch {epoch} last loss {loss.item():.4f} dev macro-F1 {macro_f1(model, dev_loader, len(labels)):.4f}")
    torch.save({"model": model.state_dict(), "labels": labels}, "ledgar_cnn.pt")


if __name__ == "__main__":
    main()
