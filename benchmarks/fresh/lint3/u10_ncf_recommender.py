"""NeuMF (He et al. 2017) on MovieLens-1M implicit feedback, leave-one-out evaluation with HR@10 / NDCG@10."""

import argparse
import logging
import math

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("ncf")


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, factors=32, mlp=(128, 64, 32)):
        super().__init__()
        self.user_gmf = nn.Embedding(n_users, factors)
        self.item_gmf = nn.Embedding(n_items, factors)
        self.user_mlp = nn.Embedding(n_users, mlp[0] // 2)
        self.item_mlp = nn.Embedding(n_items, mlp[0] // 2)
        layers = []
        for a, b in zip(mlp[:-1], mlp[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.predict = nn.Linear(factors + mlp[-1], 1)
        for emb in (self.user_gmf, self.item_gmf, self.user_mlp, self.item_mlp):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, users, items):
        gmf = self.user_gmf(users) * self.item_gmf(items)
        mlp = self.mlp(torch.cat([self.user_mlp(users), self.item_mlp(items)], dim=-1))
        return self.predict(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


class Interactions(Dataset):
    """Each positive pair plus `neg` sampled negatives, resampled every epoch."""

    def __init__(self, pairs, n_items, seen, neg=4):
        self.pairs, self.n_items, self.seen, self.neg = pairs, n_items, seen, neg
        self.resample()

    def resample(self):
        rows = []
        for u, i in self.pairs:
            rows.append((u, i, 1.0))
            for _ in range(self.neg):
                j = np.random.randint(self.n_items)
                while j in self.seen[u]:
                    j = np.random.randint(self.n_items)
                rows.append((u, j, 0.0))
        self.rows = np.array(rows, dtype=np.float64)

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, k):
        u, i, y = self.rows[k]
        return int(u), int(i), np.float32(y)


def init_item_embeddings(model, path, device):
    vectors = torch.from_numpy(np.load(path)).float()
    assert vectors.shape == model.item_gmf.weight.shape, vectors.shape
    model.item_gmf.weight = nn.Parameter(vectors.to(device))
    log.info("item GMF factors initialised from %s", path)


@torch.no_grad()
def hit_ratio_ndcg(model, test, device, k=10):
    model.eval()
    hits, ndcgs = [], []
    for u, pos, negs in test:  # one held-out positive and 99 negatives per user
        items = torch.tensor([pos] + list(negs), device=device)
        scores = model(torch.full_like(items, u), items)
        rank = (scores > scores[0]).sum().item()
        hits.append(rank < k)
        ndcgs.append(1.0 / math.log2(rank + 2) if rank < k else 0.0)
    model.train()
    return float(np.mean(hits)), float(np.mean(ndcgs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/ml-1m.npz")
    ap.add_argument("--item-init", default="")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--bs", type=int, default=256)
    ap.add_argument("--lr", type=float, default=1e-3)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    blob = np.load(args.data, allow_pickle=True)
    n_users, n_items = int(blob["n_users"]), int(blob["n_items"])
    seen = blob["seen"].item()
    train_set = Interactions(blob["train_pairs"], n_items, seen)
    model = NeuMF(n_users, n_items).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    if args.item_init:
        init_item_embeddings(model, args.item_init, device)
    criterion = nn.BCEWithLogitsLoss()

    for epoch in range(args.epochs):
        train_set.resample()
        loader = DataLoader(train_set, batch_size=args.bs, shuffle=True, num_workers=2)
        total = 0.0
        for users, items, labels in loader:
            for t in (users, items, labels):
                t.to(device, non_blocking=True)
            optimizer.zero_grad()
            loss = criterion(model(users, items), labels)
            loss.backward()
            optimizer.step()
            total += loss.item() * len(labels)
        hr, ndcg = hit_ratio_ndcg(model, blob["test"], device)
        log.info("epoch %d loss %.4f HR@10 %.4f NDCG@10 %.4f", epoch, total / len(train_set), hr, ndcg)


if __name__ == "__main__":
    main()
