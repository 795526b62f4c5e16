"""Pairwise (RankNet) learning-to-rank for e-commerce search results."""
import argparse
import csv
import os
import random
from collections import defaultdict

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch._six import inf
from torch.utils.data import DataLoader, Dataset

NUM_FEATURES = 46


def read_letor(path):
    groups = defaultdict(list)
    with open(path, newline="") as fh:
        for row in csv.reader(fh, delimiter="\t"):
            qid, rel, feats = row[0], int(row[1]), [float(v) for v in row[2:2 + NUM_FEATURES]]
            groups[qid].append((rel, feats))
    return groups


class PairDataset(Dataset):
    def __init__(self, groups, max_pairs_per_query=64, seed=0):
        rng = random.Random(seed)
        self.pairs = []
        for items in groups.values():
            cand = [(i, j) for i in range(len(items)) for j in range(len(items))
                    if items[i][0] > items[j][0]]
            rng.shuffle(cand)
            for i, j in cand[:max_pairs_per_query]:
                self.pairs.append((items[i][1], items[j][1]))

    def __len__(self):
        return len(self.pairs)

    def __getitem__(self, k):
        better, worse = self.pairs[k]
        return torch.tensor(better), torch.tensor(worse)


class Scorer(nn.Module):
    def __init__(self, hidden=128):
        super().__init__()
        self.net = nn.Sequential(nn.LayerNorm(NUM_FEATURES), nn.Linear(NUM_FEATURES, hidden),
                                 nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, hidden // 2),
                                 nn.ReLU(), nn.Linear(hidden // 2, 1))

    def forward(self, x):
        return self.net(x).squeeze(-1)


def grad_norm(parameters, norm_type=2.0):
    grads = [p.grad.detach() for p in parameters if p.grad is not None]
    if not grads:
        return 0.0
    if norm_type == inf:
        return max(g.abs().max().item() for g in grads)
    return torch.norm(torch.stack([torch.norm(g, norm_type) for g in grads]), norm_type).item()


def ndcg_at_k(scores, rels, k=10):
    order = np.argsort(-scores)[:k]
    gains = (2 ** rels[order] - 1) / np.log2(np.arange(2, len(order) + 2))
    ideal = np.sort(rels)[::-1][:k]
    ideal_gain = ((2 ** ideal - 1) / np.log2(np.arange(2, len(ideal) + 2))).sum()
    return gains.sum() / ideal_gain if ideal_gain > 0 else 0.0


class RankTrainer:
    def __init__(self, model, lr, log_every=200):
        self.model = model
        self.optimizer = torch.optim.Adam(model.parameters(), lr=lr)
        self.log_every = log_every
        self.step = 0

    def on_epoch_start(self, epoch):
        self.model.train()
        self.optimizer.zero_grad()

    def fit_epoch(self, loader, epoch):
        self.on_epoch_start(epoch)
        for better, worse in loader:
            diff = self.model(better) - self.model(worse)
            loss = F.binary_cross_entropy_with_logits(diff, torch.ones_like(diff))
            loss.backward()
            gnorm = grad_norm(self.model.parameters(), inf)
            self.optimizer.step()
            if self.step % self.log_every == 0:
                print(f"epoch {epoch} step {self.step}  loss {loss.item():.4f}  max|grad| {gnorm:.3e}")
            self.step += 1

    @torch.no_grad()
    def evaluate(self, groups):
        self.model.eval()
        vals = []
        for items in groups.values():
            rels = np.array([r for r, _ in items], dtype=np.float64)
            feats = torch.tensor([f for _, f in items])
            vals.append(ndcg_at_k(self.model(feats).numpy(), rels))
        return float(np.mean(vals))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/search/train.tsv")
    ap.add_argument("--valid", default="data/search/valid.tsv")
    ap.add_argument("--epochs", type=int, default=15)
    ap.add_argument("--batch-size", type=int, default=512)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="models/ranknet.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    train_groups, valid_groups = read_letor(args.train), read_letor(args.valid)
    loader = DataLoader(PairDataset(train_groups), batch_size=args.batch_size, shuffle=True)
    trainer = RankTrainer(Scorer(), args.lr)
    best = -1.0
    for epoch in range(args.epochs):
        trainer.fit_epoch(loader, epoch)
        ndcg = trainer.evaluate(valid_groups)
        print(f"epoch {epoch}  valid NDCG@10 {ndcg:.4f}")
        if ndcg > best:
            best = ndcg
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save(trainer.model.state_dict(), args.out)


if __name__ == "__main__":
    main()
