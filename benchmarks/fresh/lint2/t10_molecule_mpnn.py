"""Message-passing network for molecular property regression (solubility), written in plain torch."""
import json

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class MoleculeSet(Dataset):
    def __init__(self, path):
        with open(path) as fh:
            self.records = json.load(fh)  # [{"x": [[...]], "edges": [[src, dst], ...], "y": float}, ...]

    def __len__(self):
        return len(self.records)

    def __getitem__(self, i):
        r = self.records[i]
        edges = torch.tensor(r["edges"], dtype=torch.long).reshape(-1, 2).t()
        return torch.tensor(r["x"], dtype=torch.float32), edges, torch.tensor(r["y"], dtype=torch.float32)


def collate_graphs(batch):
    xs, edge_list, graph_ids, ys = [], [], [], []
    offset = 0
    for g, (x, edges, y) in enumerate(batch):
        xs.append(x)
        edge_list.append(edges + offset)
        graph_ids.append(torch.full((x.size(0),), g, dtype=torch.long))
        ys.append(y)
        offset += x.size(0)
    return torch.cat(xs), torch.cat(edge_list, dim=1), torch.cat(graph_ids), torch.stack(ys)


@torch.no_grad()
def pair_norm(h, scale=1.0, eps=1e-6):
    """Centre node features and rescale them to a fixed mean norm (counters over-smoothing)."""
    h = h - h.mean(dim=0, keepdim=True)
    return scale * h / (h.pow(2).sum(dim=1).mean().sqrt() + eps)


class MPLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.message = nn.Linear(2 * dim, dim)
        self.update = nn.GRUCell(dim, dim)

    def forward(self, h, edge_index):
        src, dst = edge_index
        msg = F.relu(self.message(torch.cat([h[src], h[dst]], dim=1)))
        agg = h.new_zeros(h.shape).index_add_(0, dst, msg)
        return self.update(agg, h)


class MPNN(nn.Module):
    def __init__(self, in_dim, dim=128, depth=4):
        super().__init__()
        self.embed = nn.Linear(in_dim, dim)
        self.layers = nn.ModuleList(MPLayer(dim) for _ in range(depth))
        self.readout = nn.Sequential(nn.Linear(dim, dim), nn.ReLU(), nn.Linear(dim, 1))

    def forward(self, x, edge_index, graph_ids, n_graphs):
        h = F.relu(self.embed(x))
        for layer in self.layers:
            h = pair_norm(layer(h, edge_index))
        pooled = h.new_zeros(n_graphs, h.size(1)).index_add_(0, graph_ids, h)
        counts = torch.bincount(graph_ids, minlength=n_graphs).clamp(min=1).unsqueeze(1)
        return self.readout(pooled / counts).squeeze(-1)


def run(loader, model, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, n = 0.0, 0
    with torch.set_grad_enabled(training):
        for x, edges, gid, y in loader:
            x, edges, gid, y = x.to(device), edges.to(device), gid.to(device), y.to(device)
            loss = F.mse_loss(model(x, edges, gid, y.size(0)), y)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total += loss.item() * y.size(0)
            n += y.size(0)
    return (total / n) ** 0.5


if __name__ == "__main__":
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set, val_set = MoleculeSet("data/esol_train.json"), MoleculeSet("data/esol_val.json")
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, collate_fn=collate_graphs)
    val_loader = DataLoader(val_set, batch_size=256, collate_fn=collate_graphs)
    model = MPNN(in_dim=train_set[0][0].size(1)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(100):
        train_rmse = run(train_loader, model, device, optimizer)
        val_rmse = run(val_loader, model, device)
        print(f"epoch {epoch:3d} train rmse {train_rmse:.3f} val rmse {val_rmse:.3f}")
    torch.save(model.state_dict(), "mpnn_esol.pt")
