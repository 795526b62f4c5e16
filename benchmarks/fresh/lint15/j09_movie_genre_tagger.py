import re
from collections import Counter
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from sklearn.metrics import f1_score
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class TaggerConfig:
    csv: str = "data/movie_plots.csv"
    max_tokens: int = 300
    vocab_size: int = 30000
    dim: int = 128
    batch_size: int = 64
    epochs: int = 8
    lr: float = 1e-3
    threshold: float = 0.5
    min_genre_count: int = 50


def tokenize(text):
    return re.findall(r"[a-z]+", str(text).lower())


def encode_genres(series, min_count):
    lists = [g.split("|") for g in series.fillna("")]
    counts = Counter(g for gs in lists for g in gs if g)
    genres = sorted(g for g, c in counts.items() if c >= min_count)
    index = {g: i for i, g in enumerate(genres)}
    targets = np.zeros((len(lists), len(genres)), dtype=np.float32)
    for row, gs in enumerate(lists):
        for g in gs:
            if g in index:
                targets[row, index[g]] = 1.0
    return genres, targets


def encode_plots(plots, vocab_size, max_tokens):
    tokens = [tokenize(p)[:max_tokens] for p in plots]
    counts = Counter(t for ts in tokens for t in ts)
    vocab = {w: i + 2 for i, (w, _) in enumerate(counts.most_common(vocab_size - 2))}
    ids = np.zeros((len(tokens), max_tokens), dtype=np.int64)
    for row, ts in enumerate(tokens):
        seq = [vocab.get(t, 1) for t in ts]
        ids[row, : len(seq)] = seq
    return vocab, ids


class PlotEncoder(nn.Module):
    def __init__(self, vocab_size, dim, n_genres):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim, padding_idx=0)
        self.mlp = nn.Sequential(nn.Linear(2 * dim, dim), nn.ReLU(), nn.Dropout(0.2), nn.Linear(dim, n_genres))

    def forward(self, ids):
        mask = (ids != 0).unsqueeze(-1).float()
        emb = self.embed(ids)
        mean = (emb * mask).sum(1) / mask.sum(1).clamp_min(1.0)
        peak = emb.masked_fill(mask == 0, -1e4).max(1).values
        return self.mlp(torch.cat([mean, peak], dim=1))


def build_criterion(cfg):
    return nn.CrossEntropyLoss()


def predict_tags(model, ids, cfg, batch=512):
    model.eval()
    outs = []
    with torch.no_grad():
        for start in range(0, len(ids), batch):
            logits = model(ids[start:start + batch])
            outs.append(torch.softmax(logits, dim=1) > cfg.threshold)
    return torch.cat(outs).int().numpy()


def main(cfg=TaggerConfig()):
    torch.manual_seed(0)
    df = pd.read_csv(cfg.csv).dropna(subset=["Plot"])
    genres, targets = encode_genres(df["Genre"], cfg.min_genre_count)
    keep = targets.sum(1) > 0
    vocab, ids = encode_plots(df["Plot"][keep].tolist(), cfg.vocab_size, cfg.max_tokens)
    targets = targets[keep]
    order = np.random.default_rng(0).permutation(len(ids))
    cut = int(0.85 * len(order))
    tr, te = order[:cut], order[cut:]
    train_set = TensorDataset(torch.from_numpy(ids[tr]), torch.from_numpy(targets[tr]))
    loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True)
    model = PlotEncoder(len(vocab) + 2, cfg.dim, len(genres))
    criterion = build_criterion(cfg)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        total = 0.0
        for x, y in loader:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(x)
        pred = predict_tags(model, torch.from_numpy(ids[te]), cfg)
        micro = f1_score(targets[te], pred, average="micro", zero_division=0)
        print(f"epoch {epoch}: loss {total / len(train_set):.4f} micro-F1 {micro:.4f}")
    torch.save({"model": model.state_dict(), "genres": genres, "vocab": vocab}, "genre_tagger.pt")


if __name__ == "__main__":
    main()
