import argparse
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn


def parse_args():
    p = argparse.ArgumentParser()
    p.add_argument("--data", default="data/argon/clusters_38.npz")
    p.add_argument("--init-from", default="")
    p.add_argument("--epochs", type=int, default=300)
    p.add_argument("--batch-size", type=int, default=16)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--force-weight", type=float, default=10.0)
    p.add_argument("--cutoff", type=float, default=8.5)
    p.add_argument("--n-radial", type=int, default=24)
    p.add_argument("--seed", type=int, default=5)
    p.add_argument("--out", default="runs/argon_nnp")
    return p.parse_args()


class RadialDescriptor(nn.Module):
    def __init__(self, n_radial, cutoff):
        super().__init__()
        self.cutoff = cutoff
        self.register_buffer("centres", torch.linspace(3.0, cutoff, n_radial))
        self.register_buffer("width", torch.tensor(0.5 * (cutoff - 3.0) / n_radial) ** -2)

    def forward(self, positions):
        n = positions.size(1)
        i, j = torch.triu_indices(n, n, offset=1, device=positions.device)
        rij = (positions[:, i] - positions[:, j]).norm(dim=-1)
        fc = 0.5 * (torch.cos(torch.pi * rij / self.cutoff) + 1.0) * (rij < self.cutoff)
        g = torch.exp(-self.width * (rij.unsqueeze(-1) - self.centres) ** 2) * fc.unsqueeze(-1)
        out = positions.new_zeros(positions.size(0), n, self.centres.numel())
        out.index_add_(1, i, g)
        out.index_add_(1, j, g)
        return out


class AtomicPotential(nn.Module):
    def __init__(self, n_radial, cutoff):
        super().__init__()
        self.descriptor = RadialDescriptor(n_radial, cutoff)
        self.embed = nn.Sequential(nn.Linear(n_radial, 64), nn.SiLU())
        self.readout = nn.Sequential(nn.Linear(64, 64), nn.SiLU(), nn.Linear(64, 1))

    def forward(self, positions):
        atomic = self.readout(self.embed(self.descriptor(positions)))
        return atomic.squeeze(-1).sum(dim=1)


def energy_and_forces(model, positions):
    positions = positions.detach().requires_grad_(True)
    energy = model(positions)
    forces = -torch.autograd.grad(energy.sum(), positions, create_graph=model.training)[0]
    return energy, forces


def freeze_by_hooks(module):
    return [p.register_hook(lambda g: torch.zeros(g.shape)) for p in module.parameters()]


def load_frames(path):
    data = np.load(path)
    pos = torch.from_numpy(data["positions"].astype(np.float64))
    energy = torch.from_numpy(data["energy"].astype(np.float64))
    forces = torch.from_numpy(data["forces"].astype(np.float64))
    return pos, energy, forces


def batches(n, size, shuffle):
    order = torch.randperm(n) if shuffle else torch.arange(n)
    for start in range(0, n, size):
        yield order[start:start + size]


def main():
    args = parse_args()
    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    pos, energy, forces = load_frames(args.data)
    n_atoms = pos.size(1)
    n_val = len(pos) // 10
    split = torch.randperm(len(pos))
    val_idx, train_idx = split[:n_val], split[n_val:]
    e_mean = energy[train_idx].mean() / n_atoms

    model = AtomicPotential(args.n_radial, args.cutoff).double().to(device)
    if args.init_from:
        state = torch.load(args.init_from, map_location=device, weights_only=True)
        model.load_state_dict(state["model"])
        freeze_by_hooks(model.embed)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ExponentialLR(optimizer, gamma=0.995)
    for epoch in range(args.epochs):
        model.train()
        for idx in batches(len(train_idx), args.batch_size, shuffle=True):
            rows = train_idx[idx]
            p, e, f = pos[rows].to(device), energy[rows].to(device), forces[rows].to(device)
            pred_e, pred_f = energy_and_forces(model, p)
            loss_e = ((pred_e - e) / n_atoms).pow(2).mean()
            loss_f = (pred_f - f).pow(2).mean()
            loss = loss_e + args.force_weight * loss_f
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
        scheduler.step()
        if epoch % 10 == 0:
            model.eval()
            p, e, f = pos[val_idx].to(device), energy[val_idx].to(device), forces[val_idx].to(device)
            pred_e, pred_f = energy_and_forces(model, p)
            mae_e = ((pred_e.detach() - e) / n_atoms).abs().mean().item()
            mae_f = (pred_f.detach() - f).abs().mean().item()
            print(f"epoch {epoch:04d} E/atom MAE {mae_e:.5f} F MAE {mae_f:.5f} (ref {e_mean.item():.4f})")
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    torch.save({"model": model.state_dict(), "n_radial": args.n_radial, "cutoff": args.cutoff}, out / "nnp.pt")


if __name__ == "__main__":
    main()
