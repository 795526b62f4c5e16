"""Click-through style "will the user rate this movie >= 4" model on MovieLens-20M with DeepFM.

Sparse fields: user, movie, genre (first listed), year bucket, hour of day, weekday. The user
and movie tables are large (138k users, 27k movies), and the job shares a 16 GB card with
the other jobs of the team.
"""
import argparse
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

FIELDS = ["user", "movie", "genre", "year_bucket", "hour", "weekday"]


class DeepFM(nn.Module):
    def __init__(self, cardinalities, k=32, hidden=(400, 400, 400), dropout=0.2):
        super().__init__()
        self.register_buffer("offsets", torch.tensor([0] + list(np.cumsum(cardinalities)[:-1]), dtype=torch.long))
        total = int(sum(cardinalities))
        self.linear = nn.Embedding(total, 1)
        self.embed = nn.Embedding(total, k)
        nn.init.normal_(self.embed.weight, std=0.01)
        nn.init.zeros_(self.linear.weight)
        self.bias = nn.Parameter(torch.zeros(1))
        layers, d = [], len(cardinalities) * k
        for h in hidden:
            layers += [nn.Linear(d, h), nn.ReLU(), nn.Dropout(dropout)]
            d = h
        layers.append(nn.Linear(d, 1))
        self.mlp = nn.Sequential(*layers)

    def forward(self, fields):
        idx = fields + self.offsets
        e = self.embed(idx)
        first = self.linear(idx).sum(dim=(1, 2))
        fm = 0.5 * (e.sum(dim=1).pow(2) - e.pow(2).sum(dim=1)).sum(dim=1)
        deep = self.mlp(e.flatten(1)).squeeze(1)
        return self.bias + first + fm + deep


def load_split(path):
    d = np.load(path)
    return TensorDataset(torch.from_numpy(d["fields"].astype(np.int64)), torch.from_numpy(d["label"].astype(np.float32)))


def auc_score(scores, labels):
    order = torch.argsort(scores)
    ranks = torch.empty_like(order, dtype=torch.float64)
    ranks[order] = torch.arange(1, len(scores) + 1, dtype=torch.float64)
    pos = labels > 0.5
    n_pos, n_neg = int(pos.sum()), int((~pos).sum())
    return ((ranks[pos].sum() - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)).item()


def evaluate(model, loader, device):
    model.eval()
    scores, labels, loss_sum = [], [], 0.0
    with torch.no_grad():
        for fields, y in loader:
            logits = model(fields.to(device)).float()
            loss_sum += F.binary_cross_entropy_with_logits(logits, y.to(device), reduction="sum").item()
            scores.append(logits.cpu())
            labels.append(y)
    scores, labels = torch.cat(scores), torch.cat(labels)
    return loss_sum / len(labels), auc_score(scores, labels)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/ml20m_train.npz")
    ap.add_argument("--valid", default="data/ml20m_valid.npz")
    ap.add_argument("--cardinalities", default="data/ml20m_cardinalities.npy")
    ap.add_argument("--batch-size", type=int, default=4096)
    ap.add_argument("--epochs", type=int, default=5)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--dim", type=int, default=32)
    args = ap.parse_args()

    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cards = np.load(args.cardinalities).tolist()
    train_loader = DataLoader(load_split(args.train), batch_size=args.batch_size, shuffle=True, num_workers=4,
                              pin_memory=True)
    valid_loader = DataLoader(load_split(args.valid), batch_size=16384)

    model = DeepFM(cards, k=args.dim).to(device).half()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    for epoch in range(args.epochs):
        model.train()
        t0, seen, running = time.time(), 0, 0.0
        for step, (fields, y) in enumerate(train_loader):
            fields, y = fields.to(device, non_blocking=True), y.to(device, non_blocking=True)
            logits = model(fields)
            loss = F.binary_cross_entropy_with_logits(logits.float(), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * y.size(0)
            seen += y.size(0)
            if step % 1000 == 0:
                print(f"  epoch {epoch} step {step:6d} logloss {running / seen:.4f}")
        val_loss, val_auc = evaluate(model, valid_loader, device)
        print(f"epoch {epoch}: train {running / seen:.4f}  valid logloss {val_loss:.4f}  AUC {val_auc:.4f}"
              f"  ({time.time() - t0:.0f}s)")
        torch.save(model.state_dict(), f"deepfm_epoch{epoch}.pt")


if __name__ == "__main__":
    main()
