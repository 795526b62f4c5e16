"""HOMO-LUMO gap regression on QM9 with a plain message-passing network (no PyG needed).

qm9_graphs.npz (made by our preprocessing script) stores every molecule as flat arrays:
atom_z, atom_ptr, edge_src, edge_dst, bond_type, edge_ptr, gap_ev.
"""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset, Subset


@dataclass
class Config:
    path: str = "data/qm9_graphs.npz"
    hidden: int = 128
    layers: int = 4
    batch_size: int = 128
    epochs: int = 150
    lr: float = 5e-4
    n_val: int = 10_000
    n_test: int = 10_000
    seed: int = 0


@dataclass
class GraphBatch:
    z: torch.Tensor
    edge_index: torch.Tensor
    bond: torch.Tensor
    graph: torch.Tensor
    y: torch.Tensor
    num_graphs: int

    def to(self, device):
        return GraphBatch(self.z.to(device), self.edge_index.to(device), self.bond.to(device),
                          self.graph.to(device), self.y.to(device), self.num_graphs)


class QM9Graphs(Dataset):
    def __init__(self, path):
        d = np.load(path)
        self.z, self.atom_ptr = torch.from_numpy(d["atom_z"]).long(), d["atom_ptr"]
        self.src, self.dst = torch.from_numpy(d["edge_src"]).long(), torch.from_numpy(d["edge_dst"]).long()
        self.bond, self.edge_ptr = torch.from_numpy(d["bond_type"]).long(), d["edge_ptr"]
        self.gap = torch.from_numpy(d["gap_ev"]).float()

    def __len__(self):
        return len(self.gap)

    def __getitem__(self, i):
        a0, a1, e0, e1 = self.atom_ptr[i], self.atom_ptr[i + 1], self.edge_ptr[i], self.edge_ptr[i + 1]
        edges = torch.stack([self.src[e0:e1], self.dst[e0:e1]])
        return self.z[a0:a1], edges, self.bond[e0:e1], self.gap[i]


def collate(items):
    zs, edges, bonds, graph, ys, offset = [], [], [], [], [], 0
    for g, (z, e, b, y) in enumerate(items):
        zs.append(z)
        edges.append(e + offset)
        bonds.append(b)
        graph.append(torch.full((len(z),), g, dtype=torch.long))
        ys.append(y)
        offset += len(z)
    return GraphBatch(torch.cat(zs), torch.cat(edges, 1), torch.cat(bonds), torch.cat(graph),
                      torch.stack(ys), len(items))


class MPLayer(nn.Module):
    def __init__(self, h):
        super().__init__()
        self.message = nn.Sequential(nn.Linear(3 * h, h), nn.SiLU(), nn.Linear(h, h))
        self.update = nn.Sequential(nn.Linear(2 * h, h), nn.SiLU(), nn.Linear(h, h))
        self.norm = nn.LayerNorm(h)

    def forward(self, h, edge_index, e):
        src, dst = edge_index
        m = self.message(torch.cat([h[src], h[dst], e], dim=-1))
        agg = h.new_zeros(h.shape).index_add_(0, dst, m)
        return self.norm(h + self.update(torch.cat([h, agg], dim=-1)))


class GapMPNN(nn.Module):
    def __init__(self, hidden, layers):
        super().__init__()
        self.atom = nn.Embedding(10, hidden)
        self.bond = nn.Embedding(5, hidden)
        self.layers = nn.ModuleList(MPLayer(hidden) for _ in range(layers))
        self.readout = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, b: GraphBatch):
        h, e = self.atom(b.z), self.bond(b.bond)
        for layer in self.layers:
            h = layer(h, b.edge_index, e)
        pooled = h.new_zeros(b.num_graphs, h.size(1)).index_add_(0, b.graph, h)
        return self.readout(pooled)


def main(cfg: Config):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds = QM9Graphs(cfg.path)
    perm = torch.randperm(len(ds), generator=torch.Generator().manual_seed(cfg.seed)).tolist()
    test_idx, val_idx, train_idx = perm[:cfg.n_test], perm[cfg.n_test:cfg.n_test + cfg.n_val], perm[cfg.n_test + cfg.n_val:]
    y_train = ds.gap[train_idx]
    mean, std = y_train.mean().item(), y_train.std().item()
    loader = lambda idx, shuffle: DataLoader(Subset(ds, idx), batch_size=cfg.batch_size, shuffle=shuffle,
                                             collate_fn=collate, num_workers=4)
    train_dl, val_dl, test_dl = loader(train_idx, True), loader(val_idx, False), loader(test_idx, False)

    model = GapMPNN(cfg.hidden, cfg.layers).to(device)
    criterion = nn.MSELoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.7, patience=5, min_lr=1e-5)

    def mae_ev(dl):
        model.eval()
        err, n = 0.0, 0
        with torch.no_grad():
            for b in dl:
                b = b.to(device)
                pred = model(b).squeeze(-1) * std + mean
                err += (pred - b.y).abs().sum().item()
                n += b.num_graphs
        return err / n

    for epoch in range(cfg.epochs):
        model.train()
        for b in train_dl:
            b = b.to(device)
            optimizer.zero_grad()
            loss = criterion(model(b), (b.y - mean) / std)
            loss.backward()
            optimizer.step()
        val_mae = mae_ev(val_dl)
        scheduler.step(val_mae)
        print(f"epoch {epoch + 1:03d} val MAE {val_mae:.4f} eV lr {optimizer.param_groups[0]['lr']:.1e}")
    print(f"test MAE {mae_ev(test_dl):.4f} eV")
    torch.save({"model": model.state_dict(), "mean": mean, "std": std}, "qm9_gap_mpnn.pt")


if __name__ == "__main__":
    main(Config())
