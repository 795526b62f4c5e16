"""Wafer-map defect pattern classification (WM-811K style: 0 = off-wafer, 1 = pass, 2 = fail).

The maps are resized to 48x48 offline and stored as wafers.npz (maps, labels, split). The job is
preempted regularly on the shared cluster, so it checkpoints every epoch and resumes when a
checkpoint is present. The final network is exported for the inspection station.
"""
import os
import time

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

CFG = {
    "data": "data/wm811k/wafers.npz",
    "classes": ["Center", "Donut", "Edge-Loc", "Edge-Ring", "Loc", "Near-full", "Random", "Scratch", "none"],
    "epochs": 40,
    "batch_size": 128,
    "lr": 3e-4,
    "checkpoint": "checkpoints/wafer_last.pt",
    "export": "export/wafer_cnn.pt",
    "seed": 7,
}


def one_hot_maps(maps):
    x = torch.from_numpy(maps.astype(np.int64))
    return F.one_hot(x, num_classes=3).permute(0, 3, 1, 2).float()


def load_split(path):
    blob = np.load(path)
    maps, labels, split = blob["maps"], blob["labels"], blob["split"]
    out = {}
    for name in ("train", "val"):
        keep = split == name
        out[name] = TensorDataset(one_hot_maps(maps[keep]), torch.from_numpy(labels[keep]).long())
    return out


class WaferNet(nn.Module):
    def __init__(self, n_classes, width=32):
        super().__init__()

        def stage(cin, cout):
            return nn.Sequential(
                nn.Conv2d(cin, cout, 3, padding=1, bias=False),
                nn.BatchNorm2d(cout),
                nn.ReLU(),
                nn.MaxPool2d(2),
            )

        self.features = nn.Sequential(stage(3, width), stage(width, width * 2), stage(width * 2, width * 4))
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(width * 4 * 6 * 6, n_classes))

    def forward(self, x):
        return self.classifier(self.features(x))


def class_weights(labels, n_classes):
    counts = torch.bincount(labels, minlength=n_classes).float().clamp_min(1.0)
    return (counts.sum() / counts) / n_classes


def save_checkpoint(path, model, optimizer, epoch, best_acc):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    torch.save(
        {"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epoch": epoch, "best_acc": best_acc},
        path,
    )


def load_checkpoint(path, model, optimizer=None):
    state = torch.load(path, map_location="cpu", weights_only=True)
    model.load_state_dict(state["model"])
    if optimizer is not None:
        optimizer.load_state_dict(state["optimizer"])
    return state["epoch"] + 1, state["best_acc"]


def export(model, path):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    model.eval()
    torch.save(model.cpu(), path)


def run_epoch(model, loader, device, criterion, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, correct, loss_sum = 0, 0, 0.0
    with torch.set_grad_enabled(training):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = criterion(logits, y)
            if training:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * y.numel()
            correct += (logits.argmax(1) == y).sum().item()
            total += y.numel()
    return loss_sum / total, correct / total


def main():
    torch.manual_seed(CFG["seed"])
    np.random.seed(CFG["seed"])
    os.makedirs("checkpoints", exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    data = load_split(CFG["data"])
    train_loader = DataLoader(data["train"], batch_size=CFG["batch_size"], shuffle=True, drop_last=True)
    val_loader = DataLoader(data["val"], batch_size=512)
    n_classes = len(CFG["classes"])

    model = WaferNet(n_classes).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=CFG["lr"])
    weights = class_weights(data["train"].tensors[1], n_classes).to(device)
    criterion = nn.CrossEntropyLoss(weight=weights)

    start_epoch, best_acc = 0, 0.0
    if os.path.exists(CFG["checkpoint"]):
        start_epoch, best_acc = load_checkpoint(CFG["checkpoint"], model)
        print(f"resumed at epoch {start_epoch} (best val acc {best_acc:.4f})")

    for epoch in range(start_epoch, CFG["epochs"]):
        t0 = time.time()
        tr_loss, tr_acc = run_epoch(model, train_loader, device, criterion, optimizer)
        va_loss, va_acc = run_epoch(model, val_loader, device, criterion)
        if va_acc > best_acc:
            best_acc = va_acc
            torch.save(model.state_dict(), "checkpoints/wafer_best.pt")
        save_checkpoint(CFG["checkpoint"], model, optimizer, epoch, best_acc)
        print(f"{epoch:3d} train {tr_loss:.3f}/{tr_acc:.3f} val {va_loss:.3f}/{va_acc:.3f} ({time.time() - t0:.0f}s)")

    model.load_state_dict(torch.load("checkpoints/wafer_best.pt", map_location=device, weights_only=True))
    export(model, CFG["export"])


if __name__ == "__main__":
    main()
