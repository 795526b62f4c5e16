"""Road-sensor speed forecasting (15 min ahead) with a graph GRU trained on several cities."""
import argparse
import copy
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Sampler


class CityWindows(Dataset):
    def __init__(self, npz_path, city_id=0, history=12, horizon=3):
        d = np.load(npz_path)
        speed = torch.from_numpy(d["speed"].astype(np.float32))
        self.mean, self.std = speed.mean(), speed.std().clamp_min(1e-6)
        self.speed = (speed - self.mean) / self.std
        self.edges = torch.from_numpy(d["edges"].astype(np.int64))
        self.history, self.horizon = history, horizon
        self.city_id = city_id

    def __len__(self):
        return self.speed.shape[0] - self.history - self.horizon + 1

    def __getitem__(self, t):
        x = self.speed[t: t + self.history]
        y = self.speed[t + self.history + self.horizon - 1]
        return x, y, self.city_id


class SameCityBatches(Sampler):
    def __init__(self, concat, batch_size, seed=0):
        super().__init__()
        self.ends = list(concat.cumulative_sizes)
        self.batch_size, self.seed, self.epoch = batch_size, seed, 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def __iter__(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        batches, start = [], 0
        for end in self.ends:
            perm = torch.randperm(end - start, generator=g) + start
            batches += [b.tolist() for b in perm.split(self.batch_size) if len(b) == self.batch_size]
            start = end
        order = torch.randperm(len(batches), generator=g)
        return iter([batches[i] for i in order])

    def __len__(self):
        start, total = 0, 0
        for end in self.ends:
            total += (end - start) // self.batch_size
            start = end
        return total


def laplacian_pe(edges, n, k):
    adj = torch.zeros(n, n)
    adj[edges[0], edges[1]] = 1.0
    adj = torch.maximum(adj, adj.T)
    deg = adj.sum(1).clamp_min(1.0)
    lap = torch.eye(n) - adj / torch.sqrt(deg[:, None] * deg[None, :])
    _, vecs = torch.linalg.eigh(lap)
    return vecs[:, 1: k + 1]


class GraphGRU(nn.Module):
    def __init__(self, pe_dim=8, hidden=64):
        super().__init__()
        self.inp = nn.Linear(1 + pe_dim, hidden)
        self.msg = nn.Linear(hidden, hidden)
        self.cell = nn.GRUCell(2 * hidden, hidden)
        self.out = nn.Linear(hidden, 1)
        self.hidden = hidden

    def propagate(self, h, edges):
        src, dst = edges
        agg = torch.zeros_like(h).index_add_(1, dst, self.msg(h)[:, src])
        deg = torch.zeros(h.size(1), device=h.device).index_add_(0, dst, torch.ones_like(dst, dtype=h.dtype))
        return agg / deg.clamp_min(1.0)[None, :, None]

    def forward(self, x, edges, pe):
        B, T, N = x.shape
        h = x.new_zeros(B, N, self.hidden)
        for t in range(T):
            inp = self.inp(torch.cat([x[:, t, :, None], pe.expand(B, N, -1)], dim=-1))
            m = self.propagate(h, edges)
            h = self.cell(torch.cat([inp, m], -1).reshape(B * N, -1), h.reshape(B * N, -1)).view(B, N, -1)
        return self.out(h).squeeze(-1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cities", nargs="+", default=["data/traffic/city_a.npz", "data/traffic/city_b.npz"])
    ap.add_argument("--val-city", default="data/traffic/city_c.npz")
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="checkpoints/graph_gru.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    cities = [CityWindows(p, i) for i, p in enumerate(args.cities)]
    graphs = [(c.edges, laplacian_pe(c.edges, c.speed.shape[1], 8)) for c in cities]
    train_set = ConcatDataset(cities)
    sampler = SameCityBatches(train_set, args.batch_size)
    train_dl = DataLoader(train_set, batch_sampler=sampler)
    val = CityWindows(args.val_city)
    val_graph = (val.edges, laplacian_pe(val.edges, val.speed.shape[1], 8))
    val_dl = DataLoader(val, batch_size=64)

    model = GraphGRU()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_mae, best_state = float("inf"), None
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y, city in train_dl:
            edges, pe = graphs[int(city[0])]
            optimizer.zero_grad()
            loss = F.l1_loss(model(x, edges, pe), y)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 5.0)
            optimizer.step()
        model.eval()
        err, n = 0.0, 0
        with torch.no_grad():
            for x, y, _ in val_dl:
                err += (model(x, *val_graph) - y).abs().sum().item()
                n += y.numel()
        mae = err / max(n, 1) * val.std.item()
        print(f"epoch {epoch}: val MAE {mae:.2f} km/h")
        if mae < best_mae:
            best_mae, best_state = mae, copy.deepcopy(model.state_dict())
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(best_state, args.out)


if __name__ == "__main__":
    main()
