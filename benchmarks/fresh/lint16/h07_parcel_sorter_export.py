"""Train the parcel-routing classifier on conveyor sensor readings and export it to ONNX."""
import argparse
import csv
import os
import random

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

FEATURES = ["weight_kg", "length_cm", "width_cm", "height_cm", "volume_l", "tilt_deg", "reflectivity"]
ROUTES = ["letter", "small", "medium", "large", "oversize", "irregular"]


def read_table(path):
    xs, ys = [], []
    with open(path, newline="") as fh:
        for row in csv.DictReader(fh):
            xs.append([float(row[f]) for f in FEATURES])
            ys.append(ROUTES.index(row["route"]))
    return torch.tensor(xs, dtype=torch.float32), torch.tensor(ys, dtype=torch.long)


class RouteClassifier(nn.Module):
    def __init__(self, mean, std, hidden=(128, 64), num_classes=len(ROUTES)):
        super().__init__()
        self.register_buffer("mean", mean)
        self.register_buffer("std", std)
        layers, width = [], mean.numel()
        for h in hidden:
            layers += [nn.Linear(width, h), nn.LayerNorm(h), nn.ReLU()]
            width = h
        layers += [nn.Linear(width, num_classes), nn.Softmax(dim=-1)]
        self.mlp = nn.Sequential(*layers)

    def forward(self, x):
        return self.mlp((x - self.mean) / self.std)


def train(model, loader, epochs, lr):
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=lr)
    for epoch in range(epochs):
        model.train()
        total, seen = 0.0, 0
        for xb, yb in loader:
            optimizer.zero_grad()
            loss = criterion(model(xb), yb)
            loss.backward()
            optimizer.step()
            total += loss.item() * yb.size(0)
            seen += yb.size(0)
        print(f"epoch {epoch:2d}  loss {total / seen:.4f}")


@torch.no_grad()
def accuracy(model, x, y):
    model.eval()
    return (model(x).argmax(dim=1) == y).float().mean().item()


def export_onnx(model, path, opset=17):
    model.eval()
    dummy = torch.zeros(1, len(FEATURES))
    torch.onnx.export(
        model, (dummy,), path,
        input_names=["features"], output_names=["route_probs"],
        dynamic_axes={"features": {0: "batch"}, "route_probs": {0: "batch"}},
        opset_version=opset,
    )
    return path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--train", default="data/conveyor/train.csv")
    ap.add_argument("--test", default="data/conveyor/test.csv")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--export", default="deploy/parcel_router.onnx")
    args = ap.parse_args()

    random.seed(1)
    np.random.seed(1)
    torch.manual_seed(1)
    x_tr, y_tr = read_table(args.train)
    x_te, y_te = read_table(args.test)
    mean, std = x_tr.mean(dim=0), x_tr.std(dim=0).clamp_min(1e-6)

    model = RouteClassifier(mean, std)
    loader = DataLoader(TensorDataset(x_tr, y_tr), batch_size=args.batch_size, shuffle=True)
    train(model, loader, args.epochs, args.lr)
    print(f"test accuracy {accuracy(model, x_te, y_te):.3f}")

    os.makedirs(os.path.dirname(args.export) or ".", exist_ok=True)
    export_onnx(model, args.export)
    torch.save(model.state_dict(), args.export.replace(".onnx", ".pt"))
    print(f"exported to {args.export}")


if __name__ == "__main__":
    main()
