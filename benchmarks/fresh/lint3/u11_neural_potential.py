"""A small SchNet-style interatomic potential fitted to energies and forces (MD17 aspirin).

Forces are the negative gradient of the predicted energy with respect to the positions, so the
loss on forces differentiates through that gradient (create_graph=True).
"""

import argparse
import logging

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

log = logging.getLogger("potential")


def shifted_softplus(x):
    return F.softplus(x) - np.log(2.0)


class Interaction(nn.Module):
    def __init__(self, dim, n_rbf):
        super().__init__()
        self.filter = nn.Sequential(nn.Linear(n_rbf, dim), nn.Softplus(), nn.Linear(dim, dim))
        self.lin_in = nn.Linear(dim, dim, bias=False)
        self.lin_out = nn.Sequential(nn.Linear(dim, dim), nn.Softplus(), nn.Linear(dim, dim))

    def forward(self, h, rbf, envelope):
        w = self.filter(rbf) * envelope.unsqueeze(-1)  # (B, N, N, dim)
        msg = (w * self.lin_in(h).unsqueeze(1)).sum(2)
        return h + self.lin_out(msg)


class PairPotential(nn.Module):
    def __init__(self, n_species=10, dim=64, n_rbf=32, cutoff=5.0, blocks=3):
        super().__init__()
        self.embed = nn.Embedding(n_species, dim)
        self.centers = torch.linspace(0.0, cutoff, n_rbf)
        self.gamma = 10.0 / cutoff
        self.cutoff = cutoff
        self.blocks = nn.ModuleList(Interaction(dim, n_rbf) for _ in range(blocks))
        self.readout = nn.Sequential(nn.Linear(dim, dim // 2), nn.Softplus(), nn.Linear(dim // 2, 1))

    def forward(self, z, pos):
        n = pos.shape[1]
        diff = pos.unsqueeze(2) - pos.unsqueeze(1)  # (B, N, N, 3)
        dist = diff.pow(2).sum(-1).sqrt()
        not_self = ~torch.eye(n, dtype=torch.bool, device=pos.device)
        envelope = 0.5 * (torch.cos(dist * np.pi / self.cutoff) + 1.0) * (dist < self.cutoff) * not_self
        rbf = torch.exp(-self.gamma * (dist.unsqueeze(-1) - self.centers) ** 2)
        h = self.embed(z)
        for block in self.blocks:
            h = block(h, rbf, envelope)
        return self.readout(h).sum(dim=(1, 2))  # total energy per molecule


def energy_and_forces(model, z, pos):
    pos = pos.requires_grad_(True)
    energy = model(z, pos)
    forces = -torch.autograd.grad(energy.sum(), pos, create_graph=True)[0]
    return energy, forces


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/md17_aspirin.npz")
    ap.add_argument("--steps", type=int, default=200_000)
    ap.add_argument("--bs", type=int, default=32)
    ap.add_argument("--rho", type=float, default=0.01, help="energy weight; forces get 1 - rho")
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    data = np.load(args.data)
    z = torch.as_tensor(data["z"], dtype=torch.long, device=device)
    R = torch.as_tensor(data["R"], dtype=torch.float32, device=device)
    E = torch.as_tensor(data["E"], dtype=torch.float32, device=device).view(-1)
    Fc = torch.as_tensor(data["F"], dtype=torch.float32, device=device)
    e_mean, e_std = E.mean(), E.std()
    train_idx = torch.randperm(len(E), device=device)[:1000]

    model = PairPotential().to(device)
    opt = torch.optim.Adam(model.parameters(), lr=5e-4)
    sched = torch.optim.lr_scheduler.ExponentialLR(opt, gamma=0.96 ** (1 / 10_000))
    for step in range(args.steps):
        idx = train_idx[torch.randint(len(train_idx), (args.bs,), device=device)]
        zb = z.unsqueeze(0).expand(args.bs, -1)
        energy, forces = energy_and_forces(model, zb, R[idx].clone())
        loss_e = F.mse_loss(energy, (E[idx] - e_mean) / e_std)
        loss_f = F.mse_loss(forces, Fc[idx] / e_std)
        loss = args.rho * loss_e + (1 - args.rho) * loss_f
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        if step % 1000 == 0:
            log.info("step %d  E-loss %.5f  F-loss %.5f", step, loss_e.item(), loss_f.item())
    torch.save(model.state_dict(), "schnet_aspirin.pt")


if __name__ == "__main__":
    main()
