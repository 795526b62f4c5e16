"""Implicit-feedback recommendation (MovieLens-20M, ratings >= 4 as positives) with BPR matrix
factorisation. Negatives are drawn from the smoothed item popularity (unigram^0.75, as in
word2vec) rather than uniformly, which gives harder negatives for popular items.

python m19_bpr_popularity_negatives.py --ratings data/ml-20m/ratings.csv --dim 64
"""
import argparse
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F


def parse_args():
    ap = argparse.ArgumentParser()
    ap.add_argument("--ratings", default="data/ml-20m/ratings.csv")
    ap.add_argument("--min-rating", type=float, default=4.0)
    ap.add_argument("--dim", type=int, default=64)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=8192)
    ap.add_argument("--lr", type=float, default=5e-3)
    ap.add_argument("--reg", type=float, default=1e-5)
    ap.add_argument("--neg-power", type=float, default=0.75)
    ap.add_argument("--k", type=int, default=20)
    return ap.parse_args()


def leave_last_out(path, min_rating):
    df = pd.read_csv(path)
    df = df[df.rating >= min_rating]
    df["user"] = df.userId.astype("category").cat.codes
    df["item"] = df.movieId.astype("category").cat.codes
    df = df.sort_values(["user", "timestamp"])
    last = df.groupby("user").tail(1)
    train = df.drop(last.index)
    to_t = lambda s: torch.from_numpy(s.to_numpy(dtype=np.int64))
    return (to_t(train.user), to_t(train.item)), (to_t(last.user), to_t(last.item)), int(df.user.max()) + 1, \
        int(df.item.max()) + 1


class NegativeSampler:
    def __init__(self, train_items, n_items, power, device):
        freq = torch.bincount(train_items, minlength=n_items)
        freq **= power
        self.probs = (freq / freq.sum()).to(device)

    def sample(self, n):
        return torch.multinomial(self.probs, n, replacement=True)


class BPRMF(nn.Module):
    def __init__(self, n_users, n_items, dim):
        super().__init__()
        self.users = nn.Embedding(n_users, dim)
        self.items = nn.Embedding(n_items, dim)
        self.item_bias = nn.Embedding(n_items, 1)
        nn.init.normal_(self.users.weight, std=0.01)
        nn.init.normal_(self.items.weight, std=0.01)
        nn.init.zeros_(self.item_bias.weight)

    def score(self, u, i):
        return (self.users(u) * self.items(i)).sum(-1) + self.item_bias(i).squeeze(-1)

    def bpr_loss(self, u, pos, neg, reg):
        diff = self.score(u, pos) - self.score(u, neg)
        l2 = self.users(u).pow(2).sum(-1) + self.items(pos).pow(2).sum(-1) + self.items(neg).pow(2).sum(-1)
        return -F.logsigmoid(diff).mean() + reg * l2.mean()


@torch.no_grad()
def recall_ndcg(model, train_pairs, test_pairs, n_items, k, device, chunk=1024):
    model.eval()
    tr_u, tr_i = train_pairs
    te_u, te_i = test_pairs
    hits, ndcg = 0.0, 0.0
    item_vecs, bias = model.items.weight, model.item_bias.weight.squeeze(1)
    tr_i = tr_i[torch.argsort(tr_u)]
    indptr = torch.cat([torch.zeros(1, dtype=torch.long), torch.bincount(tr_u, minlength=int(te_u.max()) + 1).cumsum(0)])
    for start in range(0, len(te_u), chunk):
        users = te_u[start:start + chunk].to(device)
        scores = model.users(users) @ item_vecs.T + bias
        lo, cnt = indptr[users.cpu()], indptr[users.cpu() + 1] - indptr[users.cpu()]
        rows = torch.repeat_interleave(torch.arange(len(users)), cnt)
        starts = torch.repeat_interleave(lo - cnt.cumsum(0) + cnt, cnt)
        seen = tr_i[starts + torch.arange(int(cnt.sum()))]
        scores[rows.to(device), seen.to(device)] = float("-inf")
        topk = scores.topk(k, dim=1).indices.cpu()
        match = topk == te_i[start:start + chunk, None]
        hits += match.any(1).float().sum().item()
        ranks = match.float().argmax(1)
        ndcg += (match.any(1).float() / torch.log2(ranks.float() + 2)).sum().item()
    return hits / len(te_u), ndcg / len(te_u)


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_pairs, test_pairs, n_users, n_items = leave_last_out(args.ratings, args.min_rating)
    print(f"{n_users} users, {n_items} items, {len(train_pairs[0])} training interactions")
    sampler = NegativeSampler(train_pairs[1], n_items, args.neg_power, device)
    model = BPRMF(n_users, n_items, args.dim).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    users, items = train_pairs[0].to(device), train_pairs[1].to(device)
    for epoch in range(args.epochs):
        model.train()
        t0, total = time.time(), 0.0
        perm = torch.randperm(len(users), device=device)
        for idx in perm.split(args.batch_size):
            u, pos = users[idx], items[idx]
            neg = sampler.sample(len(idx))
            loss = model.bpr_loss(u, pos, neg, args.reg)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            total += loss.item() * len(idx)
        rec, ndcg = recall_ndcg(model, train_pairs, test_pairs, n_items, args.k, device)
        print(f"epoch {epoch:2d}  bpr {total / len(users):.4f}  recall@{args.k} {rec:.4f}  "
              f"ndcg@{args.k} {ndcg:.4f}  ({time.time() - t0:.0f}s)")
    torch.save(model.state_dict(), "bpr_mf.pt")


if __name__ == "__main__":
    main()
