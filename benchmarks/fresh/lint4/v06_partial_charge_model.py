"""Learn atomic partial charges whose electrostatic energy reproduces DFT reference values.

Each molecule is padded to MAX_ATOMS. A small network maps atom descriptors to charges, the
charges are shifted so that every molecule keeps its total charge, and the model is fitted to
the Coulomb part of the reference energy together with the reference dipole.
"""

import numpy as np
import torch
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

MAX_ATOMS = 29
N_DESCRIPTORS = 64
KE = 332.0637  # kcal/mol * Angstrom / e^2


class ChargeNet(nn.Module):
    def __init__(self, n_in=N_DESCRIPTORS, hidden=128):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_in, hidden), nn.SiLU(),
            nn.Linear(hidden, hidden), nn.SiLU(),
            nn.Linear(hidden, 1),
        )

    def forward(self, desc, atom_mask, total_charge):
        raw = self.net(desc).squeeze(-1) * atom_mask
        n_atoms = atom_mask.sum(dim=1, keepdim=True)
        excess = (raw.sum(dim=1, keepdim=True) - total_charge.unsqueeze(1)) / n_atoms
        return (raw - excess) * atom_mask


def coulomb_energy(charges, positions, atom_mask):
    dist = torch.cdist(positions, positions)
    qq = charges.unsqueeze(2) * charges.unsqueeze(1)
    pair_mask = atom_mask.unsqueeze(2) * atom_mask.unsqueeze(1)
    pair_mask = pair_mask * (1.0 - torch.eye(positions.shape[1], device=positions.device))
    coulomb = KE * qq / dist
    coulomb = torch.where(pair_mask.bool(), coulomb, torch.zeros_like(coulomb))
    return 0.5 * coulomb.sum(dim=(1, 2))


def dipole(charges, positions):
    return (charges.unsqueeze(-1) * positions).sum(dim=1)


def load(path):
    z = np.load(path)
    tensors = [torch.as_tensor(z[k], dtype=torch.float32) for k in
               ("descriptors", "positions", "atom_mask", "total_charge", "e_coulomb", "dipole")]
    return TensorDataset(*tensors)


def fit(train_path="qm9_charges_train.npz", val_path="qm9_charges_val.npz", epochs=200):
    torch.manual_seed(0)
    train_dl = DataLoader(load(train_path), batch_size=64, shuffle=True)
    val_dl = DataLoader(load(val_path), batch_size=512)
    model = ChargeNet()
    opt = torch.optim.AdamW(model.parameters(), lr=5e-4, weight_decay=1e-5)
    sched = torch.optim.lr_scheduler.ReduceLROnPlateau(opt, factor=0.5, patience=10)

    for epoch in range(epochs):
        model.train()
        for desc, pos, mask, qtot, e_ref, mu_ref in train_dl:
            q = model(desc, mask, qtot)
            e_loss = (coulomb_energy(q, pos, mask) - e_ref).pow(2).mean()
            mu_loss = (dipole(q, pos) - mu_ref).pow(2).sum(dim=1).mean()
            loss = e_loss + 10.0 * mu_loss
            opt.zero_grad()
            loss.backward()
            opt.step()

        model.eval()
        err, n = 0.0, 0
        with torch.no_grad():
            for desc, pos, mask, qtot, e_ref, _ in val_dl:
                q = model(desc, mask, qtot)
                err += (coulomb_energy(q, pos, mask) - e_ref).abs().sum().item()
                n += len(e_ref)
        sched.step(err / n)
        if epoch % 10 == 0:
            print(f"epoch {epoch:3d}  val MAE {err / n:.3f} kcal/mol  lr {opt.param_groups[0]['lr']:.1e}")

    torch.save(model.state_dict(), "charge_net.pt")


if __name__ == "__main__":
    fit()
