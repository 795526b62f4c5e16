"""Aqueous solubility (log S) regression on ESOL-style molecules with a message-passing
network written in plain PyTorch. Molecules are preprocessed by featurize.py into
atom features, bond index pairs and per-molecule targets."""

import pickle
import random

import torch
import torch.nn as nn
import torch.nn.functional as F

ATOM_FEATURES, HIDDEN, ROUNDS = 39, 128, 4


class EdgeMessage(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.message = nn.Sequential(nn.Linear(2 * dim, dim), nn.SiLU(), nn.Linear(dim, dim))
        self.update = nn.GRUCell(dim, dim)

    def forward(self, h, edges):
        src, dst = edges
        msgs = self.message(torch.cat([h[src], h[dst]], dim=1))
        agg = torch.zeros_like(h).index_add_(0, dst, msgs)
        return self.update(agg, h)


class SolubilityMPNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.embed = nn.Linear(ATOM_FEATURES, HIDDEN)
        self.rounds = [EdgeMessage(HIDDEN) for _ in range(ROUNDS)]
        self.readout = nn.Sequential(nn.Linear(HIDDEN, HIDDEN), nn.SiLU(), nn.Linear(HIDDEN, 1))

    def forward(self, atoms, edges, mol_index, n_mols):
        h = F.silu(self.embed(atoms))
        for layer in self.rounds:
            h = layer(h, edges)
        pooled = torch.zeros(n_mols, HIDDEN, device=h.device).index_add_(0, mol_index, h)
        counts = torch.bincount(mol_index, minlength=n_mols).clamp(min=1).unsqueeze(1)
        return self.readout(pooled / counts).squeeze(1)


def collate(mols, device):
    atoms, edges, mol_index, targets, offset = [], [], [], [], 0
    for i, mol in enumerate(mols):
        n = mol["atoms"].size(0)
        atoms.append(mol["atoms"])
        edges.append(mol["bonds"] + offset)  # (2, n_bonds), both directions
        mol_index.append(torch.full((n,), i, dtype=torch.long))
        targets.append(mol["logS"])
        offset += n
    return (torch.cat(atoms).to(device), torch.cat(edges, dim=1).to(device),
            torch.cat(mol_index).to(device), len(mols), torch.tensor(targets, device=device))


def batches(data, size, shuffle):
    order = list(range(len(data)))
    if shuffle:
        random.shuffle(order)
    for i in range(0, len(order), size):
        yield [data[j] for j in order[i:i + size]]


def main():
    with open("data/esol_featurized.pkl", "rb") as f:
        splits = pickle.load(f)  # {"train": [...], "valid": [...], "test": [...]}
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SolubilityMPNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=5e-4)
    scheduler = torch.optim.lr_scheduler.ReduceLROnPlateau(optimizer, factor=0.7, patience=8)

    for epoch in range(300):
        model.train()
        for mols in batches(splits["train"], 32, shuffle=True):
            atoms, edges, mol_index, n, y = collate(mols, device)
            loss = F.mse_loss(model(atoms, edges, mol_index, n), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()

        model.eval()
        with torch.no_grad():
            sq, count = 0.0, 0
            for mols in batches(splits["valid"], 128, shuffle=False):
                atoms, edges, mol_index, n, y = collate(mols, device)
                sq += F.mse_loss(model(atoms, edges, mol_index, n), y, reduction="sum").item()
                count += n
        rmse = (sq / count) ** 0.5
        scheduler.step(rmse)
        if epoch % 10 == 0:
            print(f"epoch {epoch}: valid RMSE {rmse:.3f} log units")

    torch.save(model.state_dict(), "esol_mpnn.pt")


if __name__ == "__main__":
    main()
