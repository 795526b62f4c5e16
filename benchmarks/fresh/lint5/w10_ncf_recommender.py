"""Neural collaborative filtering (NeuMF) on MovieLens-1M implicit feedback, leave-one-out HR@10."""

import argparse
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

from movielens import leave_one_out, load_ml1m


@dataclass
class Config:
    factors: int = 32
    mlp_layers: tuple = (128, 64, 32)
    negatives: int = 4
    lr: float = 1e-3
    weight_decay: float = 0.05
    epochs: int = 20
    batch_size: int = 2048


class PointwiseSamples(Dataset):
    def __init__(self, positives, n_items, negatives, seen):
        users, items, labels = [], [], []
        rng = np.random.default_rng()
        for u, i in positives:
            users.append(u); items.append(i); labels.append(1.0)
            for _ in range(negatives):
                j = rng.integers(n_items)
                while j in seen[u]:
                    j = rng.integers(n_items)
                users.append(u); items.append(j); labels.append(0.0)
        self.u = torch.tensor(users)
        self.i = torch.tensor(items)
        self.y = torch.tensor(labels)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, k):
        return self.u[k], self.i[k], self.y[k]


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, cfg):
        super().__init__()
        self.gmf_user = nn.Embedding(n_users, cfg.factors)
        self.gmf_item = nn.Embedding(n_items, cfg.factors)
        self.mlp_user = nn.Embedding(n_users, cfg.mlp_layers[0] // 2)
        self.mlp_item = nn.Embedding(n_items, cfg.mlp_layers[0] // 2)
        layers = []
        for a, b in zip(cfg.mlp_layers[:-1], cfg.mlp_layers[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(cfg.factors + cfg.mlp_layers[-1], 1)
        for emb in (self.gmf_user, self.gmf_item, self.mlp_user, self.mlp_item):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, u, i):
        gmf = self.gmf_user(u) * self.gmf_item(i)
        mlp = self.mlp(torch.cat([self.mlp_user(u), self.mlp_item(i)], dim=-1))
        return self.out(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


@torch.no_grad()
def hit_rate(model, test_cases, k=10, device="cpu"):
    model.eval()
    hits = 0
    for u, pos, negs in test_cases:
        items = torch.tensor([pos] + negs, device=device)
        scores = model(torch.full_like(items, u), items)
        hits += int(0 in torch.topk(scores, k).indices.tolist())
    return hits / len(test_cases)


def main(cfg: Config, device="cuda"):
    ratings, n_users, n_items = load_ml1m("data/ml-1m/ratings.dat")
    train_pos, test_cases, seen = leave_one_out(ratings, n_items, n_test_negatives=99)
    model = NeuMF(n_users, n_items, cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    criterion = nn.BCEWithLogitsLoss()

    for epoch in range(cfg.epochs):
        model.train()
        loader = DataLoader(PointwiseSamples(train_pos, n_items, cfg.negatives, seen),
                            batch_size=cfg.batch_size, shuffle=True, drop_last=True)
        batch_losses = []
        for u, i, y in loader:
            u, i, y = u.to(device), i.to(device), y.to(device)
            loss = criterion(model(u, i), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            batch_losses.append(loss)
        mean_loss = sum(batch_losses) / len(batch_losses)
        print(f"epoch {epoch:2d}  loss {mean_loss:.4f}  HR@10 {hit_rate(model, test_cases, device=device):.4f}")
    torch.save(model.state_dict(), "neumf_ml1m.pt")


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--weight-decay", type=float, default=Config.weight_decay)
    main(Config(weight_decay=parser.parse_args().weight_decay))
