"""Multi-task regression of QM9 properties with a compact SchNet-style network.

Molecules are padded to 29 atoms (the QM9 maximum) with an atom mask; interatomic distances
are expanded on Gaussian radial basis functions and used as continuous convolution filters.
Each property gets its own small readout head on the pooled molecular embedding.
"""
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


@dataclass
class Config:
    data: str = "data/qm9/qm9_padded.npz"
    targets: tuple = ("homo", "lumo", "gap", "mu", "alpha")
    hidden: int = 128
    interactions: int = 3
    r_min: float = 0.6
    cutoff: float = 6.0
    gap: float = 0.3
    batch_size: int = 100
    epochs: int = 200
    lr: float = 5e-4
    seed: int = 1


class GaussianRBF(nn.Module):
    def __init__(self, r_min, cutoff, gap):
        super().__init__()
        self.register_buffer("centres", torch.arange(r_min, cutoff, gap))
        self.gamma = 0.5 / gap ** 2

    def forward(self, d):
        return torch.exp(-self.gamma * (d.unsqueeze(-1) - self.centres) ** 2)


class Interaction(nn.Module):
    def __init__(self, hidden, n_rbf, cutoff):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(n_rbf, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.in2f = nn.Linear(hidden, hidden, bias=False)
        self.out = nn.Sequential(nn.Linear(hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.cutoff = cutoff

    def forward(self, h, rbf, dist, pair_mask):
        envelope = 0.5 * (torch.cos(dist * torch.pi / self.cutoff) + 1.0) * (dist < self.cutoff) * pair_mask
        w = self.filter(rbf) * envelope.unsqueeze(-1)
        msg = torch.einsum("bijf,bjf->bif", w, self.in2f(h))
        return h + self.out(msg)


class MultiTaskSchNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        n_rbf = int((cfg.cutoff - cfg.r_min) / cfg.gap)
        self.embed = nn.Embedding(10, cfg.hidden, padding_idx=0)
        self.rbf = GaussianRBF(cfg.r_min, cfg.cutoff, cfg.gap)
        self.blocks = nn.ModuleList(Interaction(cfg.hidden, n_rbf, cfg.cutoff) for _ in range(cfg.interactions))
        self.heads = {t: nn.Sequential(nn.Linear(cfg.hidden, cfg.hidden // 2), nn.SiLU(), nn.Linear(cfg.hidden // 2, 1))
                      for t in cfg.targets}

    def forward(self, z, pos):
        atom_mask = (z > 0).float()
        pair_mask = atom_mask.unsqueeze(1) * atom_mask.unsqueeze(2)
        pair_mask = pair_mask * (1 - torch.eye(z.shape[1], device=z.device))
        dist = torch.cdist(pos, pos)
        rbf = self.rbf(dist)
        h = self.embed(z)
        for block in self.blocks:
            h = block(h, rbf, dist, pair_mask) * atom_mask.unsqueeze(-1)
        pooled = h.sum(1)
        return {t: head(pooled).squeeze(-1) for t, head in self.heads.items()}


def load(cfg):
    z = np.load(cfg.data)
    y = np.stack([z[t] for t in cfg.targets], 1).astype(np.float32)
    n = len(y)
    rng = np.random.default_rng(cfg.seed)
    perm = rng.permutation(n)
    idx = {"train": perm[:110000], "val": perm[110000:120000], "test": perm[120000:]}
    mean, std = y[idx["train"]].mean(0), y[idx["train"]].std(0)
    ds = {k: TensorDataset(torch.from_numpy(z["Z"][v]).long(), torch.from_numpy(z["R"][v]).float(),
                           torch.from_numpy((y[v] - mean) / std)) for k, v in idx.items()}
    return ds, torch.from_numpy(std)


def mae_per_target(model, loader, std, cfg, device):
    model.eval()
    err, n = torch.zeros(len(cfg.targets)), 0
    with torch.no_grad():
        for z, pos, y in loader:
            out = model(z.to(device), pos.to(device))
            pred = torch.stack([out[t] for t in cfg.targets], 1).cpu()
            err += (pred - y).abs().sum(0)
            n += len(y)
    return (err / n) * std


def main(cfg=Config()):
    torch.manual_seed(cfg.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    ds, std = load(cfg)
    train = DataLoader(ds["train"], batch_size=cfg.batch_size, shuffle=True, drop_last=True)
    val = DataLoader(ds["val"], batch_size=500)
    model = MultiTaskSchNet(cfg).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8, patience=10)
    for epoch in range(cfg.epochs):
        model.train()
        for z, pos, y in train:
            z, pos, y = z.to(device), pos.to(device), y.to(device)
            out = model(z, pos)
            loss = sum(F.mse_loss(out[t], y[:, k]) for k, t in enumerate(cfg.targets)) / len(cfg.targets)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        maes = mae_per_target(model, val, std, cfg, device)
        scheduler.step(maes.mean().item())
        print(f"epoch {epoch:3d}  " + "  ".join(f"{t} {m:.4f}" for t, m in zip(cfg.targets, maes.tolist())))
    torch.save(model.state_dict(), "qm9_multitask_schnet.pt")


if __name__ == "__main__":
    main()
