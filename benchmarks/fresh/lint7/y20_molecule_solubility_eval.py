"""Evaluate a trained GIN solubility model (ESOL, log mol/L) on the held-out scaffold split.

Graphs were featurised offline into a list of dicts: x (atoms x 32), edge_index (2 x E), y.
The same `create_model` factory is used by the training script.
"""
import argparse
import json

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import mean_absolute_error, mean_squared_error, r2_score


class GINLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.eps = nn.Parameter(torch.zeros(1))
        self.mlp = nn.Sequential(nn.Linear(dim, dim, bias=False), nn.BatchNorm1d(dim), nn.ReLU(), nn.Linear(dim, dim))

    def forward(self, h, edge_index):
        src, dst = edge_index
        agg = torch.zeros_like(h).index_add_(0, dst, h[src])
        return torch.relu(self.mlp((1 + self.eps) * h + agg))


class SolubilityGIN(nn.Module):
    def __init__(self, in_dim=32, hidden=128, layers=4, dropout=0.1):
        super().__init__()
        self.inp = nn.Linear(in_dim, hidden)
        self.layers = nn.ModuleList(GINLayer(hidden) for _ in range(layers))
        self.readout = nn.Sequential(nn.Linear(hidden * 2, hidden), nn.ReLU(), nn.Dropout(dropout), nn.Linear(hidden, 1))

    def forward(self, x, edge_index, batch, n_graphs):
        h = self.inp(x)
        for layer in self.layers:
            h = h + layer(h, edge_index)
        summed = torch.zeros(n_graphs, h.size(1), device=h.device).index_add_(0, batch, h)
        counts = torch.bincount(batch, minlength=n_graphs).clamp(min=1).unsqueeze(1).to(h.dtype)
        return self.readout(torch.cat([summed / counts, summed], dim=1)).squeeze(-1)


def _init(module):
    if isinstance(module, nn.Linear):
        nn.init.kaiming_uniform_(module.weight, nonlinearity="relu")
        if module.bias is not None:
            nn.init.zeros_(module.bias)


def create_model(hparams, checkpoint=None, device="cpu"):
    model = SolubilityGIN(**hparams)
    if checkpoint is not None:
        state = torch.load(checkpoint, map_location="cpu", weights_only=True)
        model.load_state_dict(state["model"])
    model.apply(_init)
    return model.to(device)


def collate_graphs(graphs, device):
    xs, edges, batch, offset = [], [], [], 0
    for gi, g in enumerate(graphs):
        xs.append(g["x"])
        edges.append(g["edge_index"] + offset)
        batch.append(torch.full((g["x"].size(0),), gi, dtype=torch.long))
        offset += g["x"].size(0)
    y = torch.tensor([float(g["y"]) for g in graphs])
    return (torch.cat(xs).to(device), torch.cat(edges, dim=1).to(device),
            torch.cat(batch).to(device), len(graphs), y)


@torch.no_grad()
def predict(model, graphs, device, batch_size=128):
    model.eval()
    preds, targets = [], []
    for start in range(0, len(graphs), batch_size):
        x, ei, b, n, y = collate_graphs(graphs[start : start + batch_size], device)
        preds.append(model(x, ei, b, n).cpu())
        targets.append(y)
    return torch.cat(preds).numpy(), torch.cat(targets).numpy()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--graphs", default="data/esol_scaffold_test.pt")
    ap.add_argument("--checkpoint", default="runs/esol_gin/best.pt")
    ap.add_argument("--hparams", default="runs/esol_gin/hparams.json")
    ap.add_argument("--out", default="runs/esol_gin/test_predictions.csv")
    args = ap.parse_args()

    device = "cuda" if torch.cuda.is_available() else "cpu"
    with open(args.hparams) as f:
        hparams = json.load(f)
    graphs = torch.load(args.graphs, weights_only=True)
    model = create_model(hparams, args.checkpoint, device)

    pred, true = predict(model, graphs, device)
    rmse = float(np.sqrt(mean_squared_error(true, pred)))
    print(f"test molecules: {len(true)}")
    print(f"RMSE {rmse:.3f}  MAE {mean_absolute_error(true, pred):.3f}  R2 {r2_score(true, pred):.3f}")
    np.savetxt(args.out, np.stack([true, pred], axis=1), delimiter=",", header="y_true,y_pred", comments="")


if __name__ == "__main__":
    main()
