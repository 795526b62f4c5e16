import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class ApneaWindows(Dataset):
    def __init__(self, npz_path):
        data = np.load(npz_path)
        self.spo2 = data["spo2"].astype(np.float32)
        self.flow = data["flow"].astype(np.float32)
        self.label = data["event"].astype(np.int64)
        self.spo2 = (self.spo2 - 95.0) / 5.0
        self.flow = (self.flow - self.flow.mean()) / (self.flow.std() + 1e-6)

    def __len__(self):
        return len(self.label)

    def __getitem__(self, i):
        return torch.from_numpy(self.spo2[i])[None], torch.from_numpy(self.flow[i])[None], int(self.label[i])


def branch(channels):
    return nn.Sequential(
        nn.Conv1d(1, channels, 9, padding=4, bias=False), nn.BatchNorm1d(channels), nn.ReLU(),
        nn.MaxPool1d(4),
        nn.Conv1d(channels, channels * 2, 9, padding=4, bias=False), nn.BatchNorm1d(channels * 2), nn.ReLU(),
        nn.AdaptiveAvgPool1d(1), nn.Flatten(),
    )


class ApneaNet(nn.Module):
    def __init__(self, channels=16, n_classes=3):
        super().__init__()
        self.spo2_branch = branch(channels)
        self.flow_branch = branch(channels)
        self.head = nn.Linear(channels * 4, n_classes)

    def forward(self, spo2, flow):
        return self.head(torch.cat([self.spo2_branch(spo2), self.flow_branch(flow)], dim=1))


def run_epoch(model, loader, optimizer, device):
    training = optimizer is not None
    model.train(training)
    epoch_losses, correct, seen = [], 0, 0
    with torch.set_grad_enabled(training):
        for spo2, flow, label in loader:
            for t in (spo2, flow, label):
                t.to(device)
            logits = model(spo2, flow)
            loss = F.cross_entropy(logits, label)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            epoch_losses.append(loss)
            correct += (logits.argmax(1) == label).sum().item()
            seen += label.numel()
    return torch.stack(epoch_losses).mean().item(), correct / seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", type=Path, default=Path("data/apnea"))
    parser.add_argument("--epochs", type=int, default=25)
    parser.add_argument("--batch-size", type=int, default=128)
    parser.add_argument("--lr", type=float, default=3e-3)
    parser.add_argument("--out", type=Path, default=Path("runs/apnea"))
    args = parser.parse_args()

    torch.manual_seed(7)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_ds = ApneaWindows(args.data / "train.npz")
    val_ds = ApneaWindows(args.data / "val.npz")
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, num_workers=2)
    val_dl = DataLoader(val_ds, batch_size=256, num_workers=2)

    model = ApneaNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    args.out.mkdir(parents=True, exist_ok=True)
    log = []
    for epoch in range(args.epochs):
        train_loss, train_acc = run_epoch(model, train_dl, optimizer, device)
        val_loss, val_acc = run_epoch(model, val_dl, None, device)
        log.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
        print(f"epoch {epoch:02d} train {train_loss:.4f}/{train_acc:.3f} val {val_loss:.4f}/{val_acc:.3f}")
    torch.save(model.state_dict(), args.out / "apnea_net.pt")
    (args.out / "log.json").write_text(json.dumps(log, indent=1))


if __name__ == "__main__":
    main()
