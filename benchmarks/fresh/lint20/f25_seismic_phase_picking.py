import argparse
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

PHASES = ("noise", "P", "S")


@dataclass
class Batch:
    wave: torch.Tensor
    phase: torch.Tensor

    def to(self, device):
        self.wave.to(device, non_blocking=True)
        self.phase.to(device, non_blocking=True)
        return self

    def __len__(self):
        return self.phase.size(0)


def collate(items):
    waves, phases = zip(*items)
    return Batch(torch.stack(waves), torch.tensor(phases, dtype=torch.long))


class StationWindows(Dataset):
    def __init__(self, path):
        data = np.load(path)
        self.waves = data["waveforms"].astype(np.float32)
        self.labels = data["labels"].astype(np.int64)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        w = torch.from_numpy(self.waves[i])
        w = w - w.mean(dim=1, keepdim=True)
        return w / w.abs().max().clamp_min(1e-8), int(self.labels[i])


class PickerCNN(nn.Module):
    def __init__(self, channels=(16, 32, 64, 64)):
        super().__init__()
        layers, cin = [], 3
        for cout in channels:
            layers += [nn.Conv1d(cin, cout, 7, padding=3, bias=False), nn.BatchNorm1d(cout), nn.ReLU(), nn.MaxPool1d(4)]
            cin = cout
        self.body = nn.Sequential(*layers, nn.AdaptiveAvgPool1d(1), nn.Flatten())
        self.head = nn.Linear(cin, len(PHASES))

    def forward(self, wave):
        return self.head(self.body(wave))


def run_epoch(model, loader, device, optimizer=None):
    model.train(optimizer is not None)
    loss_sum, correct, n = 0.0, 0, 0
    with torch.set_grad_enabled(optimizer is not None):
        for batch in loader:
            batch = batch.to(device)
            logits = model(batch.wave)
            loss = F.cross_entropy(logits, batch.phase)
            if optimizer is not None:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * len(batch)
            correct += (logits.argmax(dim=1) == batch.phase).sum().item()
            n += len(batch)
    return loss_sum / n, correct / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--train", default="stead_train.npz")
    parser.add_argument("--dev", default="stead_dev.npz")
    parser.add_argument("--epochs", type=int, default=15)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = DataLoader(StationWindows(args.train), batch_size=256, shuffle=True, collate_fn=collate, num_workers=4, pin_memory=True, drop_last=True)
    dev_loader = DataLoader(StationWindows(args.dev), batch_size=1024, collate_fn=collate, num_workers=4, pin_memory=True)
    model = PickerCNN().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        train_loss, train_acc = run_epoch(model, train_loader, device, optimizer)
        dev_loss, dev_acc = run_epoch(model, dev_loader, device)
        print(f"epoch {epoch}: train {train_loss:.4f}/{train_acc:.3f} dev {dev_loss:.4f}/{dev_acc:.3f}")
    torch.save(model.state_dict(), "phase_picker.pt")


if __name__ == "__main__":
    main()
