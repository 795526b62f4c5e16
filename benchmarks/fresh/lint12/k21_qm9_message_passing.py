"""HOMO-LUMO gap on QM9 with a distance-aware message-passing network in plain PyTorch.

qm9_graphs.pt holds a dict of flat tensors (z, pos, edge_index, node_ptr, edge_ptr, gap) built
by the preprocessing script. The final model is the average of the last few epoch snapshots.
"""
import copy
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


@dataclass
class Config:
    path: str = "data/qm9/qm9_graphs.pt"
    hidden: int = 128
    layers: int = 4
    rbf: int = 32
    cutoff: float = 5.0
    batch_size: int = 128
    epochs: int = 150
    lr: float = 5e-4
    snapshots: int = 5
    amp: bool = True


class QM9Graphs(Dataset):
    def __init__(self, blob, idx):
        self.b, self.idx = blob, idx

    def __len__(self):
        return len(self.idx)

    def __getitem__(self, i):
        g = int(self.idx[i])
        n0, n1 = self.b["node_ptr"][g], self.b["node_ptr"][g + 1]
        e0, e1 = self.b["edge_ptr"][g], self.b["edge_ptr"][g + 1]
        return self.b["z"][n0:n1], self.b["pos"][n0:n1], self.b["edge_index"][:, e0:e1] - n0, self.b["gap"][g]


def collate(graphs):
    zs, pos, edges, ys, batch, offset = [], [], [], [], [], 0
    for k, (z, p, e, y) in enumerate(graphs):
        zs.append(z)
        pos.append(p)
        edges.append(e + offset)
        ys.append(y)
        batch.append(torch.full((len(z),), k, dtype=torch.long))
        offset += len(z)
    return torch.cat(zs), torch.cat(pos), torch.cat(edges, dim=1), torch.cat(batch), torch.stack(ys)


def gaussian_rbf(dist, centers, gamma):
    if torch.is_autocast_enabled("cuda"):
        dist = dist.to(torch.get_autocast_dtype("cuda"))
        centers = centers.to(dist.dtype)
    return torch.exp(-gamma * (dist.unsqueeze(-1) - centers) ** 2)


class Interaction(nn.Module):
    def __init__(self, hidden, n_rbf):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(n_rbf, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.update = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h, edge_index, rbf):
        src, dst = edge_index
        msg = h[src] * self.filter(rbf)
        agg = torch.zeros_like(h).index_add_(0, dst, msg.to(h.dtype))
        return self.norm(h + self.update(torch.cat([h, agg], dim=-1)))


class GapNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.embed = nn.Embedding(10, cfg.hidden)
        self.register_buffer("centers", torch.linspace(0.0, cfg.cutoff, cfg.rbf))
        self.gamma = 10.0 / cfg.cutoff
        self.blocks = nn.ModuleList(Interaction(cfg.hidden, cfg.rbf) for _ in range(cfg.layers))
        self.readout = nn.Sequential(nn.Linear(cfg.hidden, cfg.hidden, bias=False), nn.BatchNorm1d(cfg.hidden),
                                     nn.SiLU(), nn.Linear(cfg.hidden, 1))

    def forward(self, z, pos, edge_index, batch, n_graphs):
        dist = (pos[edge_index[0]] - pos[edge_index[1]]).norm(dim=-1)
        rbf = gaussian_rbf(dist, self.centers, self.gamma)
        h = self.embed(z)
        for block in self.blocks:
            h = block(h, edge_index, rbf)
        pooled = torch.zeros(n_graphs, h.size(1), device=h.device, dtype=h.dtype).index_add_(0, batch, h)
        return self.readout(pooled).squeeze(-1)


def average_states(states):
    avg = copy.deepcopy(states[-1])
    for key, value in avg.items():
        if value.is_floating_point():
            value.copy_(torch.stack([s[key] for s in states]).mean(dim=0))
    return avg


def run(model, loader, device, cfg, optimizer=None):
    model.train(optimizer is not None)
    abs_err, n = 0.0, 0
    for z, pos, edges, batch, y in loader:
        z, pos, edges, batch, y = (t.to(device) for t in (z, pos, edges, batch, y))
        with torch.set_grad_enabled(optimizer is not None), \
                torch.autocast("cuda", dtype=torch.bfloat16, enabled=cfg.amp and device.type == "cuda"):
            pred = model(z, pos, edges, batch, len(y)).float()
        loss = F.l1_loss(pred, y)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        abs_err += loss.item() * len(y)
        n += len(y)
    return abs_err / n


def main(cfg=Config()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    blob = torch.load(cfg.path, weights_only=True)
    perm = torch.randperm(len(blob["gap"]), generator=torch.Generator().manual_seed(0))
    splits = {"train": perm[:110_000], "valid": perm[110_000:120_000], "test": perm[120_000:]}
    train_dl = DataLoader(QM9Graphs(blob, splits["train"]), cfg.batch_size, shuffle=True, drop_last=True,
                          collate_fn=collate)
    valid_dl = DataLoader(QM9Graphs(blob, splits["valid"]), 512, collate_fn=collate)
    test_dl = DataLoader(QM9Graphs(blob, splits["test"]), 512, collate_fn=collate)

    model = GapNet(cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.5, patience=10)
    snapshots = []
    for epoch in range(cfg.epochs):
        train_mae = run(model, train_dl, device, cfg, optimizer)
        valid_mae = run(model, valid_dl, device, cfg)
        scheduler.step(valid_mae)
        if epoch >= cfg.epochs - cfg.snapshots:
            snapshots.append(copy.deepcopy(model.state_dict()))
        print(f"epoch {epoch:3d} train MAE {train_mae:.4f} eV valid MAE {valid_mae:.4f} eV")

    model.load_state_dict(average_states(snapshots))
    print(f"snapshot average: test MAE {run(model, test_dl, device, cfg):.4f} eV")
    torch.save(model.state_dict(), "qm9_gapnet_avg.pt")


if __name__ == "__main__":
    main()
