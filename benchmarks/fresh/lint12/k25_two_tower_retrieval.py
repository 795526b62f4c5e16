"""Two-tower retrieval on MovieLens-1M with in-batch negatives.

The item tower starts from content vectors (TF-IDF of genres + title words, reduced with
truncated SVD); user and item ids are mapped to contiguous indices. Leave-last-out evaluation
with Recall@50 over all items.
"""
import random
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from sklearn.decomposition import TruncatedSVD
from sklearn.feature_extraction.text import TfidfVectorizer
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Config:
    ratings: str = "data/ml-1m/ratings.dat"
    movies: str = "data/ml-1m/movies.dat"
    content_dim: int = 64
    dim: int = 64
    temperature: float = 0.05
    batch_size: int = 1024
    epochs: int = 20
    lr: float = 1e-3
    seed: int = 5


def load(cfg):
    r = pd.read_csv(cfg.ratings, sep="::", engine="python", names=["user", "item", "rating", "ts"])
    m = pd.read_csv(cfg.movies, sep="::", engine="python", names=["item", "title", "genres"], encoding="latin-1")
    r = r[r["rating"] >= 4].sort_values(["user", "ts"])
    user_index = {u: i for i, u in enumerate(sorted(r["user"].unique()))}
    item_index = {it: i for i, it in enumerate(sorted(m["item"].unique()))}
    r = r.assign(u=r["user"].map(user_index), i=r["item"].map(item_index))
    m = m.assign(i=m["item"].map(item_index)).sort_values("i")
    text = (m["genres"].str.replace("|", " ", regex=False) + " " + m["title"]).tolist()
    tfidf = TfidfVectorizer(min_df=2).fit_transform(text)
    content = TruncatedSVD(cfg.content_dim, random_state=cfg.seed).fit_transform(tfidf)
    last = r.groupby("u").tail(1)
    train = r.drop(last.index)
    return train, last, content, len(user_index), len(item_index)


class Tower(nn.Module):
    def __init__(self, n_in, dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(n_in, 256, bias=False), nn.BatchNorm1d(256), nn.ReLU(),
                                 nn.Linear(256, dim))

    def forward(self, x):
        return F.normalize(self.mlp(x), dim=-1)


class TwoTower(nn.Module):
    def __init__(self, n_users, n_items, content, cfg):
        super().__init__()
        self.user_emb = nn.Embedding(n_users, cfg.dim)
        self.item_emb = nn.Embedding(n_items, cfg.dim)
        self.item_content = nn.Embedding(n_items, content.shape[1])
        self.item_content.weight.data.copy_(torch.from_numpy(content))
        self.item_content.weight.requires_grad_(False)
        self.user_tower = Tower(cfg.dim, cfg.dim)
        self.item_tower = Tower(cfg.dim + content.shape[1], cfg.dim)
        nn.init.normal_(self.user_emb.weight, std=0.05)
        nn.init.normal_(self.item_emb.weight, std=0.05)

    def users(self, u):
        return self.user_tower(self.user_emb(u))

    def items(self, i):
        return self.item_tower(torch.cat([self.item_emb(i), self.item_content(i)], dim=-1))


@torch.no_grad()
def recall_at_k(model, train, test, n_items, device, k=50):
    model.eval()
    all_items = model.items(torch.arange(n_items, device=device))
    seen = train.groupby("u")["i"].apply(list).to_dict()
    hits = 0
    for start in range(0, len(test), 1024):
        chunk = test.iloc[start:start + 1024]
        scores = model.users(torch.tensor(chunk["u"].to_numpy(), device=device)) @ all_items.T
        for row, u in enumerate(chunk["u"].tolist()):
            scores[row, seen.get(u, [])] = -float("inf")
        top = scores.topk(k, dim=1).indices.cpu()
        hits += int((top == torch.tensor(chunk["i"].to_numpy())[:, None]).any(1).sum())
    return hits / len(test)


def main(cfg=Config()):
    random.seed(cfg.seed)
    np.random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, test, content, n_users, n_items = load(cfg)
    pairs = TensorDataset(torch.tensor(train["u"].to_numpy(), dtype=torch.long),
                          torch.tensor(train["i"].to_numpy(), dtype=torch.long))
    loader = DataLoader(pairs, batch_size=cfg.batch_size, shuffle=True, drop_last=True)

    model = TwoTower(n_users, n_items, content, cfg).to(device)
    optimizer = torch.optim.Adam([p for p in model.parameters() if p.requires_grad], lr=cfg.lr)
    for epoch in range(cfg.epochs):
        model.train()
        total, steps = 0.0, 0
        for u, i in loader:
            u, i = u.to(device), i.to(device)
            logits = model.users(u) @ model.items(i).T / cfg.temperature
            same_item = i[:, None] == i[None, :]
            logits = logits.masked_fill(same_item & ~torch.eye(len(i), dtype=torch.bool, device=device), -1e4)
            loss = F.cross_entropy(logits, torch.arange(len(u), device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total, steps = total + loss.item(), steps + 1
        print(f"epoch {epoch:2d} in-batch softmax loss {total / steps:.4f} "
              f"Recall@50 {recall_at_k(model, train, test, n_items, device):.4f}")
    torch.save(model.state_dict(), "ml1m_two_tower.pt")


if __name__ == "__main__":
    main()
