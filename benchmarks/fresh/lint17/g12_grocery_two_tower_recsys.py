"""Two-tower retrieval model for an online grocery store.

User tower: the user's recent basket (item ids). Item tower: a learned id embedding plus
fixed catalogue features (price band, aisle, organic flag, ...). Item ids in the logs start at
1; 0 is reserved for padding the baskets.
"""
import argparse
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Interactions(Dataset):
    def __init__(self, path, history_len):
        with open(path) as fh:
            self.rows = [json.loads(line) for line in fh]
        self.history_len = history_len

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        hist = row["history"][-self.history_len:]
        hist = [0] * (self.history_len - len(hist)) + hist
        return torch.tensor(hist, dtype=torch.long), torch.tensor(row["next_item"], dtype=torch.long)


class ItemTower(nn.Module):
    def __init__(self, num_items, catalogue_feats, dim):
        super().__init__()
        self.id_embed = nn.Embedding(num_items + 1, dim, padding_idx=0)
        self.register_buffer("catalogue", catalogue_feats)
        self.feat_proj = nn.Linear(catalogue_feats.shape[1], dim)

    def forward(self, item_ids):
        feats = torch.index_select(self.catalogue, 0, item_ids.reshape(-1)).view(*item_ids.shape, -1)
        return self.id_embed(item_ids) + self.feat_proj(feats)


class UserTower(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.mlp = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, hist_emb, hist_ids):
        mask = (hist_ids != 0).unsqueeze(-1).float()
        pooled = (hist_emb * mask).sum(1) / mask.sum(1).clamp(min=1.0)
        return self.mlp(pooled)


class TwoTower(nn.Module):
    def __init__(self, num_items, catalogue_feats, dim=64, temperature=0.05):
        super().__init__()
        self.items = ItemTower(num_items, catalogue_feats, dim)
        self.users = UserTower(dim)
        self.temperature = temperature

    def forward(self, hist_ids, target_ids):
        user = F.normalize(self.users(self.items(hist_ids), hist_ids), dim=-1)
        item = F.normalize(self.items(target_ids), dim=-1)
        return user @ item.t() / self.temperature


def load_catalogue(path):
    data = np.load(path)
    feats = data["features"].astype(np.float32)
    feats = (feats - feats.mean(0)) / (feats.std(0) + 1e-6)
    return torch.from_numpy(feats)


@torch.no_grad()
def recall_at_k(model, loader, k, device):
    model.eval()
    hits = n = 0
    for hist, target in loader:
        hist, target = hist.to(device), target.to(device)
        scores = model(hist, target)
        topk = scores.topk(min(k, scores.size(1)), dim=1).indices
        hits += (topk == torch.arange(len(target), device=device).unsqueeze(1)).any(dim=1).sum().item()
        n += len(target)
    return hits / max(n, 1)


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--catalogue", default="data/catalogue_features.npz")
    ap.add_argument("--train", default="data/baskets_train.jsonl")
    ap.add_argument("--valid", default="data/baskets_valid.jsonl")
    ap.add_argument("--history", type=int, default=20)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="runs/two_tower")
    args = ap.parse_args(argv)

    random.seed(42)
    np.random.seed(42)
    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    catalogue = load_catalogue(args.catalogue)
    num_items = catalogue.shape[0]
    model = TwoTower(num_items, catalogue).to(device)
    train_dl = DataLoader(Interactions(args.train, args.history), batch_size=args.batch_size, shuffle=True, drop_last=True)
    valid_dl = DataLoader(Interactions(args.valid, args.history), batch_size=args.batch_size)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    for epoch in range(args.epochs):
        model.train()
        total = 0.0
        for step, (hist, target) in enumerate(train_dl):
            hist, target = hist.to(device), target.to(device)
            logits = model(hist, target)
            loss = F.cross_entropy(logits, torch.arange(len(target), device=device))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item()
            if step % 200 == 0:
                print(f"epoch {epoch} step {step} loss {total / (step + 1):.4f}")
        print(f"epoch {epoch}: recall@10 {recall_at_k(model, valid_dl, 10, device):.4f}")
        torch.save({"model": model.state_dict(), "num_items": num_items}, out / f"two_tower_e{epoch}.pt")


if __name__ == "__main__":
    main()
