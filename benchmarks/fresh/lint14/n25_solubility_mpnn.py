import copy
import json
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader

OPTIONS = {"graphs": "data/esol/graphs.json", "atom_vectors": "data/esol/atom_type_vectors.npy",
           "steps": 4, "batch_size": 32, "epochs": 150, "lr": 5e-4, "ema": 0.995, "seed": 6, "out": "runs/esol"}


def load_graphs(path):
    graphs = json.loads(Path(path).read_text())
    return [{"atoms": g["atom_types"], "edges": g["bonds"], "bond_types": g["bond_types"], "y": float(g["logS"])}
            for g in graphs]


def collate_graphs(batch):
    atoms, src, dst, bonds, graph_of = [], [], [], [], []
    offset = 0
    for gi, g in enumerate(batch):
        atoms += g["atoms"]
        for (a, b), t in zip(g["edges"], g["bond_types"]):
            src += [a + offset, b + offset]
            dst += [b + offset, a + offset]
            bonds += [t, t]
        graph_of += [gi] * len(g["atoms"])
        offset += len(g["atoms"])
    return {"atoms": torch.tensor(atoms), "src": torch.tensor(src, dtype=torch.long),
            "dst": torch.tensor(dst, dtype=torch.long), "bonds": torch.tensor(bonds, dtype=torch.long),
            "graph_of": torch.tensor(graph_of), "y": torch.tensor([g["y"] for g in batch]), "n": len(batch)}


class MessageLayer(nn.Module):
    def __init__(self, hidden, bond_types=4):
        super().__init__()
        self.bond = nn.Embedding(bond_types, hidden)
        self.msg = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, hidden))
        self.update = nn.GRUCell(hidden, hidden)
        self.norm = nn.LayerNorm(hidden)

    def forward(self, h, src, dst, bonds):
        m = self.msg(torch.cat([h[src], self.bond(bonds)], dim=1))
        agg = torch.zeros_like(h).index_add_(0, dst, m)
        return self.norm(self.update(agg, h))


class SolubilityNet(nn.Module):
    def __init__(self, n_atom_types, hidden, steps):
        super().__init__()
        self.atom = nn.Embedding(n_atom_types, hidden)
        self.layers = nn.ModuleList([MessageLayer(hidden) for _ in range(steps)])
        self.readout = nn.Sequential(nn.Linear(2 * hidden, hidden), nn.SiLU(), nn.Linear(hidden, 1))

    def forward(self, batch):
        h = self.atom(batch["atoms"])
        for layer in self.layers:
            h = layer(h, batch["src"], batch["dst"], batch["bonds"])
        counts = torch.bincount(batch["graph_of"], minlength=batch["n"]).clamp(min=1).unsqueeze(1).to(h.dtype)
        summed = torch.zeros(batch["n"], h.size(1), device=h.device, dtype=h.dtype).index_add_(0, batch["graph_of"], h)
        return self.readout(torch.cat([summed, summed / counts], dim=1)).squeeze(1)


def to_device(batch, device):
    return {k: v.to(device) if torch.is_tensor(v) else v for k, v in batch.items()}


@torch.no_grad()
def update_ema(ema, model, decay):
    for e, p in zip(ema.parameters(), model.parameters()):
        e.mul_(decay).add_(p.detach(), alpha=1 - decay)


@torch.no_grad()
def rmse(model, loader, device, y_mean, y_std):
    model.eval()
    err, n = 0.0, 0
    for batch in loader:
        batch = to_device(batch, device)
        pred = model(batch) * y_std + y_mean
        err += ((pred - batch["y"]) ** 2).sum().item()
        n += batch["n"]
    return (err / n) ** 0.5


def main(o=OPTIONS):
    random.seed(o["seed"]); np.random.seed(o["seed"]); torch.manual_seed(o["seed"])
    graphs = load_graphs(o["graphs"])
    random.shuffle(graphs)
    n_test = len(graphs) // 10
    test, valid, train = graphs[:n_test], graphs[n_test:2 * n_test], graphs[2 * n_test:]
    ys = torch.tensor([g["y"] for g in train])
    y_mean, y_std = ys.mean().item(), ys.std().item()
    make = lambda gs, shuffle: DataLoader(gs, batch_size=o["batch_size"], shuffle=shuffle, collate_fn=collate_graphs)
    train_loader, valid_loader, test_loader = make(train, True), make(valid, False), make(test, False)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vectors = torch.from_numpy(np.load(o["atom_vectors"]).astype(np.float32))
    model = SolubilityNet(vectors.size(0), vectors.size(1), o["steps"])
    model.atom.weight = nn.Parameter(vectors.clone())
    model.to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=o["lr"])
    ema = copy.deepcopy(model).requires_grad_(False)
    best, best_state = float("inf"), None
    for epoch in range(o["epochs"]):
        model.train()
        for batch in train_loader:
            batch = to_device(batch, device)
            loss = F.mse_loss(model(batch), (batch["y"] - y_mean) / y_std)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            update_ema(ema, model, o["ema"])
        val = rmse(ema, valid_loader, device, y_mean, y_std)
        if val < best:
            best, best_state = val, copy.deepcopy(ema.state_dict())
        if epoch % 10 == 0:
            print(f"epoch {epoch:03d} valid RMSE (EMA) {val:.4f}")
    ema.load_state_dict(best_state)
    print(f"test RMSE {rmse(ema, test_loader, device, y_mean, y_std):.4f} (best valid {best:.4f})")
    Path(o["out"]).mkdir(parents=True, exist_ok=True)
    torch.save({"model": ema.state_dict(), "y_mean": y_mean, "y_std": y_std}, Path(o["out"]) / "best.pt")


if __name__ == "__main__":
    main()
