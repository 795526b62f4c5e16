"""Tag arXiv abstracts with their subject categories (cs.LG, stat.ML, ...).

A paper usually carries two or three categories; the model is a bag of embeddings with an MLP.
"""
import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import f1_score
from sklearn.model_selection import train_test_split
from sklearn.preprocessing import MultiLabelBinarizer
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    csv_path: str = "data/arxiv_abstracts.csv"
    min_freq: int = 3
    max_tokens: int = 256
    embed_dim: int = 128
    hidden: int = 256
    dropout: float = 0.2
    batch_size: int = 64
    epochs: int = 12
    lr: float = 2e-3
    threshold: float = 0.5
    seed: int = 13


TOKEN = re.compile(r"[a-z][a-z0-9\-]+")


def tokenize(text, max_tokens):
    return TOKEN.findall(text.lower())[:max_tokens]


def build_vocab(texts, cfg):
    counts = Counter(tok for t in texts for tok in tokenize(t, cfg.max_tokens))
    itos = ["<unk>"] + sorted(w for w, c in counts.items() if c >= cfg.min_freq)
    return {w: i for i, w in enumerate(itos)}


class AbstractDataset(Dataset):
    def __init__(self, texts, targets, vocab, cfg):
        self.ids = [[vocab.get(t, 0) for t in tokenize(x, cfg.max_tokens)] or [0] for x in texts]
        self.targets = torch.as_tensor(targets, dtype=torch.float32)

    def __len__(self):
        return len(self.ids)

    def __getitem__(self, i):
        return torch.tensor(self.ids[i], dtype=torch.long), self.targets[i]


def collate(batch):
    ids, targets = zip(*batch)
    offsets = torch.tensor([0] + [len(x) for x in ids[:-1]]).cumsum(0)
    return torch.cat(ids), offsets, torch.stack(targets)


class BagTagger(nn.Module):
    def __init__(self, vocab_size, n_labels, cfg):
        super().__init__()
        self.bag = nn.EmbeddingBag(vocab_size, cfg.embed_dim, mode="mean")
        self.mlp = nn.Sequential(
            nn.Linear(cfg.embed_dim, cfg.hidden), nn.GELU(), nn.Dropout(cfg.dropout),
            nn.Linear(cfg.hidden, n_labels),
        )

    def forward(self, ids, offsets):
        return self.mlp(self.bag(ids, offsets))


def scores_to_tags(scores, threshold):
    return (scores.softmax(dim=-1) > threshold).int()


def train_one_epoch(model, loader, criterion, opt, device):
    model.train()
    total, seen = 0.0, 0
    for ids, offsets, target in loader:
        ids, offsets, target = ids.to(device), offsets.to(device), target.to(device)
        loss = criterion(model(ids, offsets), target)
        opt.zero_grad()
        loss.backward()
        opt.step()
        total += loss.item() * target.size(0)
        seen += target.size(0)
    return total / seen


@torch.no_grad()
def predict(model, loader, device, threshold):
    model.eval()
    preds, golds = [], []
    for ids, offsets, target in loader:
        scores = model(ids.to(device), offsets.to(device))
        preds.append(scores_to_tags(scores, threshold).cpu())
        golds.append(target.int())
    return torch.cat(golds).numpy(), torch.cat(preds).numpy()


def main(cfg=Config()):
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    df = pd.read_csv(cfg.csv_path).dropna(subset=["abstract", "categories"])
    mlb = MultiLabelBinarizer()
    y = mlb.fit_transform(df["categories"].str.split()).astype(np.float32)
    tr_x, va_x, tr_y, va_y = train_test_split(df["abstract"].tolist(), y, test_size=0.15, random_state=cfg.seed)
    vocab = build_vocab(tr_x, cfg)
    train_dl = DataLoader(AbstractDataset(tr_x, tr_y, vocab, cfg), batch_size=cfg.batch_size, shuffle=True, collate_fn=collate)
    val_dl = DataLoader(AbstractDataset(va_x, va_y, vocab, cfg), batch_size=256, collate_fn=collate)

    model = BagTagger(len(vocab), len(mlb.classes_), cfg).to(device)
    criterion = nn.CrossEntropyLoss()
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        train_loss = train_one_epoch(model, train_dl, criterion, opt, device)
        gold, pred = predict(model, val_dl, device, cfg.threshold)
        micro = f1_score(gold, pred, average="micro", zero_division=0)
        macro = f1_score(gold, pred, average="macro", zero_division=0)
        print(f"epoch {epoch:2d}  loss {train_loss:.4f}  micro-F1 {micro:.3f}  macro-F1 {macro:.3f}")
    torch.save({"model": model.state_dict(), "labels": [str(c) for c in mlb.classes_], "vocab": vocab}, "arxiv_tagger.pt")


if __name__ == "__main__":
    main()
