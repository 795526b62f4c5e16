import argparse
import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


@dataclass
class TrainConfig:
    interactions: str = "data/playlist_track_pairs.npy"
    run_dir: str = "runs/bpr"
    dim: int = 96
    batch_size: int = 4096
    epochs: int = 40
    lr: float = 5e-3
    l2: float = 1e-5
    eval_k: int = 50
    seed: int = 11


class BPR(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super().__init__()
        self.users = nn.Embedding(n_users, dim)
        self.items = nn.Embedding(n_items, dim)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.users.weight, std=0.05)
        nn.init.normal_(self.items.weight, std=0.05)
        nn.init.zeros_(self.item_bias.weight)

    def score(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1) + self.item_bias(i).squeeze(-1)

    def forward(self, u, pos, neg):
        return self.score(u, pos) - self.score(u, neg)


def split_last_item(pairs, n_users):
    last = np.full(n_users, -1)
    for row, (u, _) in enumerate(pairs):
        last[u] = row
    test_rows = last[last >= 0]
    mask = np.ones(len(pairs), dtype=bool)
    mask[test_rows] = False
    return pairs[mask], pairs[test_rows]


def recall_at_k(model, train, test, n_items, k):
    seen = {}
    for u, i in train:
        seen.setdefault(int(u), []).append(int(i))
    hits = 0
    with torch.no_grad():
        for u, i in test:
            scores = model.score(torch.full((n_items,), int(u)), torch.arange(n_items))
            scores[seen.get(int(u), [])] = -float("inf")
            hits += int(i in scores.topk(k).indices.tolist())
    return hits / len(test)


def save_checkpoint(path, model, optimizer, scheduler, epoch, cfg):
    torch.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                "scheduler": scheduler.state_dict(), "epoch": epoch, "config": cfg}, path)


def resume(path, model, optimizer, scheduler, device):
    if not os.path.exists(path):
        return 0
    state = torch.load(path, map_location=device)
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    print(f"resumed from epoch {state['epoch']} (dim={state['config'].dim})")
    return state["epoch"] + 1


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--epochs", type=int, default=TrainConfig.epochs)
    parser.add_argument("--run-dir", default=TrainConfig.run_dir)
    args = parser.parse_args()
    cfg = TrainConfig(epochs=args.epochs, run_dir=args.run_dir)
    os.makedirs(cfg.run_dir, exist_ok=True)
    ckpt = os.path.join(cfg.run_dir, "last.pt")
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)

    pairs = np.load(cfg.interactions)
    n_users, n_items = int(pairs[:, 0].max()) + 1, int(pairs[:, 1].max()) + 1
    train, test = split_last_item(pairs, n_users)
    model = BPR(n_users, n_items, cfg.dim).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.97)
    start = resume(ckpt, model, optimizer, scheduler, device)

    users = torch.from_numpy(train[:, 0]).long()
    items = torch.from_numpy(train[:, 1]).long()
    for epoch in range(start, cfg.epochs):
        model.train()
        perm = torch.from_numpy(rng.permutation(len(users)))
        total = 0.0
        for chunk in perm.split(cfg.batch_size):
            u, pos = users[chunk].to(device), items[chunk].to(device)
            neg = torch.randint(0, n_items, pos.shape, device=device)
            diff = model(u, pos, neg)
            reg = model.users(u).pow(2).sum() + model.items(pos).pow(2).sum() + model.items(neg).pow(2).sum()
            loss = -F.logsigmoid(diff).mean() + cfg.l2 * reg / len(chunk)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(chunk)
        scheduler.step()
        save_checkpoint(ckpt, model, optimizer, scheduler, epoch, cfg)
        if epoch % 5 == 4:
            model.eval()
            rec = recall_at_k(model.cpu(), train, test, n_items, cfg.eval_k)
            model.to(device)
            print(f"epoch {epoch}: loss {total / len(users):.4f} recall@{cfg.eval_k} {rec:.4f}")


if __name__ == "__main__":
    main()
