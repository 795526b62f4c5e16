"""Aqueous solubility regression with a message-passing neural network."""
import argparse
import json
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

NUM_ATOM_TYPES = 12
NUM_BOND_TYPES = 4


class MoleculeSet(Dataset):
    def __init__(self, path):
        with open(path) as fh:
            self.mols = [json.loads(line) for line in fh if line.strip()]

    def __len__(self):
        return len(self.mols)

    def __getitem__(self, i):
        m = self.mols[i]
        atoms = torch.tensor(m["atoms"], dtype=torch.long)
        bonds = torch.tensor(m["bonds"], dtype=torch.long).reshape(-1, 2)
        bond_types = torch.tensor(m["bond_types"], dtype=torch.long)
        edges = torch.cat([bonds, bonds.flip(1)], dim=0).T
        return atoms, edges, bond_types.repeat(2), torch.tensor(m["logS"], dtype=torch.float32)


def collate_graphs(batch):
    atoms, edges, etypes, graph_ids, targets = [], [], [], [], []
    offset = 0
    for g, (a, e, t, y) in enumerate(batch):
        atoms.append(a)
        edges.append(e + offset)
        etypes.append(t)
        graph_ids.append(torch.full((a.numel(),), g, dtype=torch.long))
        targets.append(y)
        offset += a.numel()
    return (torch.cat(atoms), torch.cat(edges, dim=1), torch.cat(etypes),
            torch.cat(graph_ids), torch.stack(targets))


def scatter_sum(src, index, size):
    return src.new_zeros(size, src.size(-1)).index_add_(0, index, src)


def count_per_index(index, size):
    counts = torch.zeros(size, device=index.device)
    return counts.scatter_(0, index, torch.ones(index.numel(), device=index.device), reduce="add")


class MessageLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.edge_net = nn.Embedding(NUM_BOND_TYPES, dim * dim)
        self.update = nn.GRUCell(dim, dim)
        self.dim = dim

    def forward(self, h, edges, etypes):
        src, dst = edges
        w = self.edge_net(etypes).view(-1, self.dim, self.dim)
        msg = torch.bmm(w, h[src].unsqueeze(-1)).squeeze(-1)
        agg = scatter_sum(msg, dst, h.size(0)) / count_per_index(dst, h.size(0)).clamp_min(1.0)[:, None]
        return self.update(agg, h)


class MPNN(nn.Module):
    def __init__(self, dim=64, steps=3):
        super().__init__()
        self.embed = nn.Embedding(NUM_ATOM_TYPES, dim)
        self.layers = nn.ModuleList([MessageLayer(dim) for _ in range(steps)])
        self.readout = nn.Sequential(nn.Linear(dim, dim), nn.SiLU(), nn.Linear(dim, 1))

    def forward(self, atoms, edges, etypes, graph_ids, num_graphs):
        h = self.embed(atoms)
        for layer in self.layers:
            h = layer(h, edges, etypes)
        pooled = scatter_sum(h, graph_ids, num_graphs) / count_per_index(graph_ids, num_graphs)[:, None]
        return self.readout(pooled).squeeze(-1)


class EarlyStopper:
    def __init__(self, patience):
        self.patience = patience
        self.best = float("inf")
        self.best_weights = None
        self.bad_epochs = 0

    def step(self, score, model):
        if score < self.best:
            self.best = score
            self.best_weights = model.state_dict()
            self.bad_epochs = 0
        else:
            self.bad_epochs += 1
        return self.bad_epochs >= self.patience


def run_epoch(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    total, count = 0.0, 0
    with torch.set_grad_enabled(optimizer is not None):
        for atoms, edges, etypes, gids, y in loader:
            atoms, edges, etypes, gids, y = (t.to(device) for t in (atoms, edges, etypes, gids, y))
            pred = model(atoms, edges, etypes, gids, y.numel())
            loss = F.mse_loss(pred, y)
            if optimizer is not None:
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(model.parameters(), 5.0)
                optimizer.step()
            total += loss.item() * y.numel()
            count += y.numel()
    return (total / max(count, 1)) ** 0.5


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/esol/train.jsonl")
    ap.add_argument("--valid", default="data/esol/valid.jsonl")
    ap.add_argument("--epochs", type=int, default=200)
    ap.add_argument("--patience", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--out", default="checkpoints/mpnn_esol.pt")
    args = ap.parse_args()

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl = DataLoader(MoleculeSet(args.train), batch_size=args.batch_size, shuffle=True,
                          collate_fn=collate_graphs)
    valid_dl = DataLoader(MoleculeSet(args.valid), batch_size=args.batch_size,
                          collate_fn=collate_graphs)

    model = MPNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    stopper = EarlyStopper(args.patience)
    for epoch in range(args.epochs):
        train_rmse = run_epoch(model, train_dl, device, optimizer)
        valid_rmse = run_epoch(model, valid_dl, device)
        print(f"epoch {epoch:3d}  train RMSE {train_rmse:.3f}  valid RMSE {valid_rmse:.3f}")
        if stopper.step(valid_rmse, model):
            print(f"no improvement for {args.patience} epochs, stopping")
            break

    model.load_state_dict(stopper.best_weights)
    print(f"restored best weights (valid RMSE {stopper.best:.3f})")
    os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
    torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
