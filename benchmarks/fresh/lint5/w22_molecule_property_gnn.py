"""Message-passing network for molecular property regression (HOMO-LUMO gap), no graph library."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

from molgraphs import ATOM_FEATURE_SIZES, BOND_FEATURE_SIZE, collate_graphs, load_split


class EdgeNetworkLayer(nn.Module):
    def __init__(self, hidden, edge_dim):
        super().__init__()
        self.message = nn.Sequential(nn.Linear(2 * hidden + edge_dim, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.update = nn.GRUCell(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h, edge_index, edge_attr):
        src, dst = edge_index
        msg = self.message(torch.cat([h[src], h[dst], edge_attr], dim=-1))
        agg = torch.zeros_like(h).index_add_(0, dst, msg)
        deg = torch.zeros(h.size(0), device=h.device).index_add_(0, dst, torch.ones_like(dst, dtype=h.dtype))
        agg = agg / deg.clamp(min=1).unsqueeze(-1)
        return self.norm(self.update(agg, h))


class MolecularMPNN(nn.Module):
    def __init__(self, hidden=128, depth=4):
        super().__init__()
        self.atom_embeddings = nn.ModuleList(nn.Embedding(n, hidden) for n in ATOM_FEATURE_SIZES)
        self.interactions = []
        for _ in range(depth):
            self.interactions.append(EdgeNetworkLayer(hidden, BOND_FEATURE_SIZE))
        self.readout = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, atom_feats, edge_index, edge_attr, batch, num_graphs):
        h = sum(emb(atom_feats[:, k]) for k, emb in enumerate(self.atom_embeddings))
        for layer in self.interactions:
            h = h + layer(h, edge_index, edge_attr)
        summed = torch.zeros(num_graphs, h.size(1), device=h.device).index_add_(0, batch, h)
        counts = torch.bincount(batch, minlength=num_graphs).clamp(min=1).unsqueeze(-1)
        return self.readout(torch.cat([summed / counts, summed], dim=-1)).squeeze(-1)


def run_epoch(model, loader, device, optimizer=None, target_mean=0.0, target_std=1.0):
    training = optimizer is not None
    model.train(training)
    abs_err, n = 0.0, 0
    with torch.set_grad_enabled(training):
        for g in loader:
            g = g.to(device)
            pred = model(g.atom_feats, g.edge_index, g.edge_attr, g.batch, g.num_graphs)
            target = (g.y - target_mean) / target_std
            loss = F.smooth_l1_loss(pred, target)
            if training:
                optimizer.zero_grad()
                loss.backward()
                torch.nn.utils.clip_grad_norm_(model.parameters(), 10.0)
                optimizer.step()
            abs_err += (pred.detach() * target_std + target_mean - g.y).abs().sum().item()
            n += g.num_graphs
    return abs_err / n


def main(epochs=150, device="cuda"):
    train_set, valid_set, test_set = (load_split(s) for s in ("train", "valid", "test"))
    ys = torch.tensor([m.y for m in train_set])
    mean, std = ys.mean().item(), ys.std().item()
    loaders = {
        name: DataLoader(ds, batch_size=64, shuffle=name == "train", collate_fn=collate_graphs, num_workers=4)
        for name, ds in (("train", train_set), ("valid", valid_set), ("test", test_set))
    }
    model = MolecularMPNN().to(device)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.7, patience=5, min_lr=1e-6)
    best = float("inf")
    for epoch in range(epochs):
        train_mae = run_epoch(model, loaders["train"], device, optimizer, mean, std)
        valid_mae = run_epoch(model, loaders["valid"], device, None, mean, std)
        sched.step(valid_mae)
        if valid_mae < best:
            best = valid_mae
            torch.save(model.state_dict(), "mpnn_gap_best.pt")
        print(f"epoch {epoch:3d}  train MAE {train_mae:.4f} eV  valid MAE {valid_mae:.4f} eV")
    model.load_state_dict(torch.load("mpnn_gap_best.pt", map_location=device, weights_only=True))
    print(f"test MAE {run_epoch(model, loaders['test'], device, None, mean, std):.4f} eV")


if __name__ == "__main__":
    main()
