import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class Esc50Mels(Dataset):
    def __init__(self, root, folds):
        self.root = Path(root)
        with open(self.root / "meta" / "esc50.csv", newline="") as fh:
            self.rows = [r for r in csv.DictReader(fh) if int(r["fold"]) in folds]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        mel = np.load(self.root / "logmel" / row["filename"].replace(".wav", ".npy"))
        return torch.from_numpy(mel).float().unsqueeze(0), int(row["target"])


def conv_block(c_in, c_out):
    return nn.Sequential(
        nn.Conv2d(c_in, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(),
        nn.Conv2d(c_out, c_out, 3, padding=1, bias=False), nn.BatchNorm2d(c_out), nn.ReLU(),
        nn.AvgPool2d(2),
    )


class AudioEncoder(nn.Module):
    def __init__(self, width=64, dim=512):
        super().__init__()
        self.blocks = nn.Sequential(conv_block(1, width), conv_block(width, 2 * width),
                                    conv_block(2 * width, 4 * width), conv_block(4 * width, dim))

    def forward(self, mel):
        h = self.blocks(mel).mean(dim=2)
        return h.max(dim=2).values + h.mean(dim=2)


class Probe(nn.Module):
    def __init__(self, encoder, dim, classes):
        super().__init__()
        self.encoder = encoder
        self.head = nn.Sequential(nn.Dropout(0.5), nn.Linear(dim, classes))

    def train(self, mode=True):
        super().train(mode)
        self.encoder.eval()
        return self

    def forward(self, mel):
        return self.head(self.encoder(mel))


def load_encoder(path):
    encoder = AudioEncoder()
    state = torch.load(path, map_location="cpu", weights_only=True)
    encoder.load_state_dict(state["encoder"])
    return encoder


def accuracy(model, loader, device):
    model.eval()
    hits = total = 0
    with torch.no_grad():
        for mel, y in loader:
            hits += (model(mel.to(device)).argmax(1).cpu() == y).sum().item()
            total += len(y)
    return hits / total


def run_fold(args, test_fold, device):
    train_set = Esc50Mels(args.root, [f for f in range(1, 6) if f != test_fold])
    test_set = Esc50Mels(args.root, [test_fold])
    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, num_workers=4, drop_last=True)
    test_loader = DataLoader(test_set, batch_size=args.batch_size, num_workers=4)
    model = Probe(load_encoder(args.encoder), 512, 50).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    for epoch in range(args.epochs):
        model.train()
        for mel, y in train_loader:
            mel, y = mel.to(device), y.to(device)
            loss = F.cross_entropy(model(mel), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
    acc = accuracy(model, test_loader, device)
    torch.save(model.head.state_dict(), Path(args.out, f"probe_fold{test_fold}.pt"))
    return acc


def main():
    parser = argparse.ArgumentParser(description="ESC-50 probe on a self-supervised audio encoder")
    parser.add_argument("--root", default="data/ESC-50")
    parser.add_argument("--encoder", default="checkpoints/byol_audio_encoder.pt")
    parser.add_argument("--out", default="runs/esc50_probe")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--epochs", type=int, default=30)
    parser.add_argument("--lr", type=float, default=0.05)
    args = parser.parse_args()

    Path(args.out).mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    torch.manual_seed(0)
    scores = [run_fold(args, fold, device) for fold in range(1, 6)]
    print("fold accuracies:", [f"{s:.3f}" for s in scores])
    print(f"mean accuracy {np.mean(scores):.3f} +- {np.std(scores):.3f}")


if __name__ == "__main__":
    main()
