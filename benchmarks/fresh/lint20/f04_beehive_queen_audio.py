import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, TensorDataset

CONFIG = {
    "channels": [16, 32, 64],
    "dropout": 0.25,
    "output_activation": "sigmoid",
    "lr": 5e-4,
    "epochs": 25,
    "batch_size": 64,
    "threshold": 0.5,
}

ACTIVATIONS = {"none": nn.Identity, "sigmoid": nn.Sigmoid, "tanh": nn.Tanh}


def build_head(in_features, cfg):
    layers = [nn.Flatten(), nn.Dropout(cfg["dropout"]), nn.Linear(in_features, 1)]
    layers.append(ACTIVATIONS[cfg["output_activation"]]())
    return nn.Sequential(*layers)


class HiveNet(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        blocks, cin = [], 1
        for cout in cfg["channels"]:
            blocks += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2)]
            cin = cout
        self.encoder = nn.Sequential(*blocks, nn.AdaptiveAvgPool2d(1))
        self.head = build_head(cin, cfg)

    def forward(self, mel):
        return self.head(self.encoder(mel))


def load_split(path, stats=None):
    data = np.load(path)
    mel = torch.from_numpy(data["logmel"]).float().unsqueeze(1)
    if stats is None:
        stats = (mel.mean().item(), mel.std().item())
    queen = torch.from_numpy(data["queen"]).float()
    return TensorDataset((mel - stats[0]) / stats[1], queen), stats


def evaluate(model, loader, device, threshold):
    model.eval()
    tp = fp = fn = tn = 0
    with torch.no_grad():
        for mel, queen in loader:
            score = model(mel.to(device)).squeeze(1).cpu()
            pred = score > threshold
            truth = queen.bool()
            tp += (pred & truth).sum().item()
            fp += (pred & ~truth).sum().item()
            fn += (~pred & truth).sum().item()
            tn += (~pred & ~truth).sum().item()
    recall = tp / max(tp + fn, 1)
    specificity = tn / max(tn + fp, 1)
    return (recall + specificity) / 2


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="hive_audio")
    parser.add_argument("--overrides", default=None)
    args = parser.parse_args()
    cfg = dict(CONFIG)
    if args.overrides:
        cfg.update(json.loads(Path(args.overrides).read_text()))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set, stats = load_split(Path(args.data) / "train.npz")
    val_set, _ = load_split(Path(args.data) / "val.npz", stats)
    positives = train_set.tensors[1].sum().item()
    pos_weight = torch.tensor([(len(train_set) - positives) / max(positives, 1.0)], device=device)
    train_loader = DataLoader(train_set, batch_size=cfg["batch_size"], shuffle=True)
    val_loader = DataLoader(val_set, batch_size=256)
    model = HiveNet(cfg).to(device)
    criterion = nn.BCEWithLogitsLoss(pos_weight=pos_weight)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    for epoch in range(cfg["epochs"]):
        model.train()
        for mel, queen in train_loader:
            mel, queen = mel.to(device), queen.to(device)
            out = model(mel)
            loss = criterion(out, queen.unsqueeze(1))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        bal_acc = evaluate(model, val_loader, device, cfg["threshold"])
        print(f"epoch {epoch:02d} balanced accuracy {bal_acc:.3f}")
    torch.save({"model": model.state_dict(), "stats": list(stats)}, Path(args.data) / "hive_net.pt")


if __name__ == "__main__":
    main()
