"""Neural matrix factorisation (NeuMF) on MovieLens-1M implicit feedback.

Leave-one-out evaluation: the latest interaction of every user is held out and ranked
against 99 sampled negatives (HR@10, NDCG@10). Negatives for training are redrawn every epoch.
"""
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class NeuMFConfig:
    ratings: str = "data/ml-1m/ratings.dat"
    emb_dim: int = 32
    mlp_layers: tuple = (128, 64, 32)
    dropout: float = 0.2
    negatives: int = 4
    batch_size: int = 1024
    lr: float = 1e-3
    weight_decay: float = 0.1
    epochs: int = 20
    seed: int = 2024


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, cfg):
        super().__init__()
        self.gmf_u = nn.Embedding(n_users, cfg.emb_dim)
        self.gmf_i = nn.Embedding(n_items, cfg.emb_dim)
        self.mlp_u = nn.Embedding(n_users, cfg.mlp_layers[0] // 2)
        self.mlp_i = nn.Embedding(n_items, cfg.mlp_layers[0] // 2)
        layers = []
        for a, b in zip(cfg.mlp_layers[:-1], cfg.mlp_layers[1:]):
            layers += [nn.Linear(a, b), nn.ReLU(), nn.Dropout(cfg.dropout)]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(cfg.emb_dim + cfg.mlp_layers[-1], 1)
        for emb in (self.gmf_u, self.gmf_i, self.mlp_u, self.mlp_i):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, u, i):
        gmf = self.gmf_u(u) * self.gmf_i(i)
        mlp = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], dim=-1))
        return self.out(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


def load_interactions(path):
    df = pd.read_csv(path, sep="::", engine="python", names=["user", "item", "rating", "ts"])
    df["user"] = df["user"].astype("category").cat.codes
    df["item"] = df["item"].astype("category").cat.codes
    df = df.sort_values(["user", "ts"])
    test = df.groupby("user").tail(1)
    train = df.drop(test.index)
    return train, test, df["user"].nunique(), df["item"].nunique()


def sample_epoch(train, n_items, k, rng):
    users = train["user"].to_numpy()
    items = train["item"].to_numpy()
    neg_u = np.repeat(users, k)
    neg_i = rng.integers(0, n_items, size=len(neg_u))
    u = np.concatenate([users, neg_u])
    i = np.concatenate([items, neg_i])
    y = np.concatenate([np.ones(len(users)), np.zeros(len(neg_u))]).astype(np.float32)
    return TensorDataset(torch.from_numpy(u).long(), torch.from_numpy(i).long(), torch.from_numpy(y))


@torch.no_grad()
def leave_one_out(model, test, n_items, rng, device, k=10):
    model.eval()
    hits, ndcg = [], []
    for u, pos in zip(test["user"].to_numpy(), test["item"].to_numpy()):
        cands = np.concatenate([[pos], rng.integers(0, n_items, size=99)])
        users = torch.full((100,), int(u), dtype=torch.long, device=device)
        scores = model(users, torch.from_numpy(cands).long().to(device))
        rank = int((scores > scores[0]).sum().item())
        hits.append(rank < k)
        ndcg.append(1.0 / np.log2(rank + 2) if rank < k else 0.0)
    return float(np.mean(hits)), float(np.mean(ndcg))


def main(cfg: NeuMFConfig):
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train, test, n_users, n_items = load_interactions(cfg.ratings)

    model = NeuMF(n_users, n_items, cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)

    model.train()
    for epoch in range(cfg.epochs):
        loader = DataLoader(sample_epoch(train, n_items, cfg.negatives, rng),
                            batch_size=cfg.batch_size, shuffle=True)
        total = 0.0
        for u, i, y in loader:
            u, i, y = u.to(device), i.to(device), y.to(device)
            loss = F.binary_cross_entropy_with_logits(model(u, i), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * y.numel()
        hr, ndcg = leave_one_out(model, test, n_items, rng, device)
        print(f"epoch {epoch:02d} loss {total / len(loader.dataset):.4f} HR@10 {hr:.4f} NDCG@10 {ndcg:.4f}")

    torch.save(model.state_dict(), "neumf_ml1m.pt")


if __name__ == "__main__":
    main(NeuMFConfig())
