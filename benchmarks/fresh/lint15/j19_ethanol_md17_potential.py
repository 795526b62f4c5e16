import argparse
import math

import numpy as np
import torch
import torch.nn as nn


class CosineCutoff(torch.autograd.Function):
    @staticmethod
    def forward(ctx, r, r_cut):
        ctx.save_for_backward(r)
        ctx.r_cut = r_cut
        inside = (r < r_cut).to(r.dtype)
        return 0.5 * (torch.cos(math.pi * r / r_cut) + 1.0) * inside

    @staticmethod
    def backward(ctx, grad_out):
        (r,) = ctx.saved_tensors
        inside = (r < ctx.r_cut).to(r.dtype)
        return grad_out * -0.5 * torch.sin(math.pi * r / ctx.r_cut) * inside, None


def configure_precision(double):
    if double:
        torch.set_default_tensor_type(torch.DoubleTensor)


class RadialBasis(nn.Module):
    def __init__(self, n_basis, r_cut):
        super().__init__()
        self.r_cut = r_cut
        self.register_buffer("centers", torch.linspace(0.5, r_cut, n_basis))
        self.width = (r_cut / n_basis) ** -2

    def forward(self, r):
        gauss = torch.exp(-self.width * (r[..., None] - self.centers) ** 2)
        return gauss * CosineCutoff.apply(r, self.r_cut)[..., None]


class AtomicEnergyNet(nn.Module):
    def __init__(self, species, n_basis=32, hidden=64, r_cut=5.0):
        super().__init__()
        self.register_buffer("species", torch.as_tensor(species))
        n_types = int(self.species.max()) + 1
        self.basis = RadialBasis(n_basis, r_cut)
        self.mix = nn.Parameter(torch.randn(n_types, n_basis, n_basis) / n_basis ** 0.5)
        self.atom_mlp = nn.Sequential(nn.Linear(n_basis, hidden), nn.SiLU(), nn.Linear(hidden, hidden), nn.SiLU(),
                                      nn.Linear(hidden, 1))

    def forward(self, pos):
        n = pos.shape[1]
        diff = pos[:, :, None, :] - pos[:, None, :, :]
        off_diag = ~torch.eye(n, dtype=torch.bool, device=pos.device)
        r = diff[:, off_diag].view(pos.shape[0], n, n - 1, 3).norm(dim=-1)
        g = self.basis(r)
        neighbours = self.species[off_diag.nonzero()[:, 1]].view(n, n - 1)
        g = torch.einsum("bijk,ijkl->bil", g, self.mix[neighbours])
        return self.atom_mlp(g).sum(dim=(1, 2))


def energy_and_forces(model, pos):
    pos = pos.requires_grad_(True)
    energy = model(pos)
    (grad,) = torch.autograd.grad(energy.sum(), pos, create_graph=model.training)
    return energy, -grad


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="data/md17_ethanol.npz")
    parser.add_argument("--n-train", type=int, default=1000)
    parser.add_argument("--epochs", type=int, default=300)
    parser.add_argument("--batch", type=int, default=32)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--force-weight", type=float, default=100.0)
    parser.add_argument("--double", action="store_true", default=True)
    args = parser.parse_args()

    configure_precision(args.double)
    torch.manual_seed(0)
    data = np.load(args.data)
    pos = torch.tensor(data["R"])
    energy = torch.tensor(data["E"]).reshape(-1)
    forces = torch.tensor(data["F"])
    species = {1: 0, 6: 1, 8: 2}
    model = AtomicEnergyNet([species[int(z)] for z in data["z"]])
    order = torch.randperm(len(pos))
    train_idx, test_idx = order[: args.n_train], order[args.n_train: args.n_train + 1000]
    e_mean = energy[train_idx].mean()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.8, patience=10)
    for epoch in range(args.epochs):
        model.train()
        epoch_loss = 0.0
        for idx in train_idx[torch.randperm(len(train_idx))].split(args.batch):
            e_pred, f_pred = energy_and_forces(model, pos[idx].clone())
            loss = ((e_pred + e_mean - energy[idx]) ** 2).mean() + args.force_weight * ((f_pred - forces[idx]) ** 2).mean()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            epoch_loss += loss.item() * len(idx)
        scheduler.step(epoch_loss)
        if epoch % 25 == 0:
            model.eval()
            e_pred, f_pred = energy_and_forces(model, pos[test_idx].clone())
            e_mae = (e_pred.detach() + e_mean - energy[test_idx]).abs().mean().item()
            f_mae = (f_pred.detach() - forces[test_idx]).abs().mean().item()
            print(f"epoch {epoch}: energy MAE {e_mae:.3f} force MAE {f_mae:.3f} kcal/mol/A")
    torch.save(model.state_dict(), "ethanol_potential.pt")


if __name__ == "__main__":
    main()
