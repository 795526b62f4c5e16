"""Four-class motor imagery (left hand, right hand, feet, tongue) from 22-channel EEG with EEGNet.

Trials are 4.5 s at 250 Hz, band-passed 4-38 Hz and stored per subject in
data/bciiv2a/A0{s}.npz (X: trials x 22 x 1125, y: 0-3). Training crops 4 s windows at random
offsets and adds channel-wise Gaussian noise and amplitude scaling.
"""
import argparse
import copy

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset


class CroppedTrials(Dataset):
    def __init__(self, X, y, crop, train, seed=0):
        self.X, self.y, self.crop, self.train = X.astype(np.float32), y.astype(np.int64), crop, train
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.y)

    def __getitem__(self, i):
        trial = self.X[i]
        if self.train:
            start = self.rng.integers(0, trial.shape[1] - self.crop + 1)
            x = trial[:, start : start + self.crop]
            x = x * self.rng.uniform(0.8, 1.2, size=(x.shape[0], 1)) + self.rng.normal(0.0, 0.05, size=x.shape)
        else:
            start = (trial.shape[1] - self.crop) // 2
            x = trial[:, start : start + self.crop]
        return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)).unsqueeze(0), self.y[i]


class EEGNet(nn.Module):
    def __init__(self, n_channels=22, n_samples=1000, n_classes=4, F1=8, D=2, F2=16, dropout=0.25):
        super().__init__()
        self.temporal = nn.Sequential(nn.Conv2d(1, F1, (1, 64), padding=(0, 32), bias=False), nn.BatchNorm2d(F1))
        self.spatial = nn.Sequential(
            nn.Conv2d(F1, F1 * D, (n_channels, 1), groups=F1, bias=False), nn.BatchNorm2d(F1 * D), nn.ELU(),
            nn.AvgPool2d((1, 4)), nn.Dropout(dropout),
        )
        self.separable = nn.Sequential(
            nn.Conv2d(F1 * D, F1 * D, (1, 16), padding=(0, 8), groups=F1 * D, bias=False),
            nn.Conv2d(F1 * D, F2, 1, bias=False), nn.BatchNorm2d(F2), nn.ELU(),
            nn.AvgPool2d((1, 8)), nn.Dropout(dropout),
        )
        t = n_samples + 1
        t = t // 4
        t = (t + 1) // 8
        self.classifier = nn.Linear(F2 * t, n_classes)

    def forward(self, x):
        x = self.separable(self.spatial(self.temporal(x)))
        return self.classifier(torch.flatten(x, 1))


def standardise(X, mean, std):
    return (X - mean[None, :, None]) / std[None, :, None]


def accuracy(model, loader, device):
    model.eval()
    correct = total = 0
    with torch.no_grad():
        for x, y in loader:
            correct += (model(x.to(device)).argmax(1).cpu() == y).sum().item()
            total += y.numel()
    return correct / total


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--subject", type=int, default=1)
    ap.add_argument("--root", default="data/bciiv2a")
    ap.add_argument("--crop", type=int, default=1000)
    ap.add_argument("--epochs", type=int, default=300)
    ap.add_argument("--batch-size", type=int, default=64)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--seed", type=int, default=20)
    args = ap.parse_args()

    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train = np.load(f"{args.root}/A0{args.subject}T.npz")
    test = np.load(f"{args.root}/A0{args.subject}E.npz")
    rng = np.random.default_rng(args.seed)
    order = rng.permutation(len(train["y"]))
    n_val = len(order) // 5
    val_idx, tr_idx = order[:n_val], order[n_val:]
    mean = train["X"][tr_idx].mean(axis=(0, 2))
    std = train["X"][tr_idx].std(axis=(0, 2)) + 1e-6

    X_all = standardise(train["X"], mean, std)
    train_set = CroppedTrials(X_all[tr_idx], train["y"][tr_idx], args.crop, train=True, seed=args.seed)
    val_set = CroppedTrials(X_all[val_idx], train["y"][val_idx], args.crop, train=False)
    test_set = CroppedTrials(standardise(test["X"], mean, std), test["y"], args.crop, train=False)

    train_loader = DataLoader(train_set, batch_size=args.batch_size, shuffle=True, drop_last=True,
                              num_workers=args.workers)
    val_loader = DataLoader(val_set, batch_size=256)
    test_loader = DataLoader(test_set, batch_size=256)

    model = EEGNet(n_samples=args.crop).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    best_acc, best_state = 0.0, copy.deepcopy(model.state_dict())
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_acc = accuracy(model, val_loader, device)
        if val_acc > best_acc:
            best_acc, best_state = val_acc, copy.deepcopy(model.state_dict())
        if epoch % 25 == 0:
            print(f"epoch {epoch:3d}  loss {loss.item():.3f}  val acc {val_acc:.3f}")

    model.load_state_dict(best_state)
    print(f"subject {args.subject}: val {best_acc:.3f}  test {accuracy(model, test_loader, device):.3f}")
    torch.save(best_state, f"eegnet_A0{args.subject}.pt")


if __name__ == "__main__":
    main()
