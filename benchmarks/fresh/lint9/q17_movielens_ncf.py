"""Neural Collaborative Filtering (NeuMF = GMF + MLP) on MovieLens-1M implicit feedback.

Leave-one-out evaluation: each user's latest interaction is ranked against 99 sampled
negatives; HR@10 and NDCG@10 are reported.
"""

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

SETTINGS = dict(ratings="data/ml-1m/ratings.dat", factors=32, mlp=(128, 64, 32), neg_per_pos=4,
                batch_size=1024, epochs=20, lr=1e-3, top_k=10, seed=2024)


class InteractionSet(Dataset):
    def __init__(self, pairs, n_items, neg_per_pos, seen, rng):
        self.pos, self.n_items, self.k, self.seen, self.rng = pairs, n_items, neg_per_pos, seen, rng
        self.resample()

    def resample(self):
        users = np.repeat(self.pos[:, 0], self.k)
        items = self.rng.integers(0, self.n_items, size=len(users))
        for j, u in enumerate(users):
            while items[j] in self.seen[u]:
                items[j] = self.rng.integers(0, self.n_items)
        self.users = np.concatenate([self.pos[:, 0], users])
        self.items = np.concatenate([self.pos[:, 1], items])
        self.labels = np.concatenate([np.ones(len(self.pos)), np.zeros(len(users))]).astype(np.float32)

    def __len__(self):
        return len(self.users)

    def __getitem__(self, i):
        return self.users[i], self.items[i], self.labels[i]


class NeuMF(nn.Module):
    def __init__(self, n_users, n_items, factors, mlp_sizes):
        super().__init__()
        self.gmf_u, self.gmf_i = nn.Embedding(n_users, factors), nn.Embedding(n_items, factors)
        self.mlp_u, self.mlp_i = nn.Embedding(n_users, mlp_sizes[0] // 2), nn.Embedding(n_items, mlp_sizes[0] // 2)
        layers = []
        for a, b in zip(mlp_sizes, mlp_sizes[1:]):
            layers += [nn.Linear(a, b), nn.ReLU()]
        self.mlp = nn.Sequential(*layers)
        self.out = nn.Linear(factors + mlp_sizes[-1], 1)
        for emb in (self.gmf_u, self.gmf_i, self.mlp_u, self.mlp_i):
            nn.init.normal_(emb.weight, std=0.01)

    def forward(self, u, i):
        gmf = self.gmf_u(u) * self.gmf_i(i)
        mlp = self.mlp(torch.cat([self.mlp_u(u), self.mlp_i(i)], dim=-1))
        return self.out(torch.cat([gmf, mlp], dim=-1)).squeeze(-1)


class Trainer:
    def __init__(self, model, train_set, eval_data, cfg, device):
        self.model, self.train_set, self.eval_data, self.cfg, self.device = model, train_set, eval_data, cfg, device
        self.optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
        self.criterion = nn.BCEWithLogitsLoss()
        self.loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True)

    def on_epoch_start(self, epoch):
        self.train_set.resample()
        self.optimizer.zero_grad()

    def on_epoch_end(self, epoch, loss):
        hr, ndcg = self.evaluate()
        print(f"epoch {epoch + 1:02d} loss {loss:.4f} HR@{self.cfg['top_k']} {hr:.4f} NDCG {ndcg:.4f}")

    def training_step(self, u, i, y):
        logits = self.model(u.to(self.device), i.to(self.device))
        return self.criterion(logits, y.to(self.device))

    def fit(self):
        for epoch in range(self.cfg["epochs"]):
            self.model.train()
            self.on_epoch_start(epoch)
            total, n = 0.0, 0
            for u, i, y in self.loader:
                loss = self.training_step(u, i, y)
                loss.backward()
                self.optimizer.step()
                total += loss.item() * len(y)
                n += len(y)
            self.on_epoch_end(epoch, total / n)

    @torch.no_grad()
    def evaluate(self):
        self.model.eval()
        users, candidates = (t.to(self.device) for t in self.eval_data)  # (U,), (U, 100), held-out first
        scores = self.model(users[:, None].expand_as(candidates), candidates)
        rank = (scores > scores[:, :1]).sum(dim=1)
        hit = rank < self.cfg["top_k"]
        ndcg = torch.where(hit, 1.0 / torch.log2(rank.float() + 2), torch.zeros_like(rank, dtype=torch.float))
        return hit.float().mean().item(), ndcg.mean().item()


def load(cfg, rng):
    df = pd.read_csv(cfg["ratings"], sep="::", engine="python", names=["user", "item", "rating", "ts"])
    df["user"] = df["user"].astype("category").cat.codes
    df["item"] = df["item"].astype("category").cat.codes
    n_users, n_items = df["user"].nunique(), df["item"].nunique()
    df = df.sort_values(["user", "ts"])
    last = df.groupby("user").tail(1)
    train = df.drop(last.index)
    seen = df.groupby("user")["item"].apply(set).to_dict()
    cands = np.zeros((n_users, 100), dtype=np.int64)
    for row, (u, held) in enumerate(zip(last["user"], last["item"])):
        pool = np.setdiff1d(rng.choice(n_items, 300, replace=False), list(seen[u]))[:99]
        cands[row] = np.concatenate([[held], pool])
    eval_data = (torch.from_numpy(last["user"].to_numpy().astype(np.int64)), torch.from_numpy(cands))
    return train[["user", "item"]].to_numpy(), seen, eval_data, n_users, n_items


def main(cfg=SETTINGS):
    rng = np.random.default_rng(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = "cuda" if torch.cuda.is_available() else "cpu"
    pairs, seen, eval_data, n_users, n_items = load(cfg, rng)
    train_set = InteractionSet(pairs, n_items, cfg["neg_per_pos"], seen, rng)
    model = NeuMF(n_users, n_items, cfg["factors"], cfg["mlp"]).to(device)
    Trainer(model, train_set, eval_data, cfg, device).fit()
    torch.save(model.state_dict(), "neumf_ml1m.pt")


if __name__ == "__main__":
    main()
