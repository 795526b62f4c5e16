import argparse

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def stall_batch(patches):
    x = torch.from_numpy(patches).float().div(255.0).permute(0, 3, 1, 2)
    return (x - 0.5) / 0.25


class StallNet(nn.Module):
    def __init__(self, width=24):
        super().__init__()
        self.body = nn.Sequential(
            nn.Conv2d(3, width, 3, padding=1, bias=False), nn.BatchNorm2d(width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(width, 2 * width, 3, padding=1, bias=False), nn.BatchNorm2d(2 * width), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(2 * width, 4 * width, 3, padding=1, bias=False), nn.BatchNorm2d(4 * width), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.4),
        )
        self.fc = nn.Linear(4 * width, 2)

    def forward(self, x):
        return self.fc(self.body(x))


class OccupancyTrainer:
    def __init__(self, model, train_loader, val_loader, lr, device):
        self.model = model.to(device)
        self.train_loader, self.val_loader = train_loader, val_loader
        self.optimizer = torch.optim.Adam(self.model.parameters(), lr=lr)
        self.device = device
        self.best_acc = 0.0

    def train_one_epoch(self):
        total, n = 0.0, 0
        for x, y in self.train_loader:
            x, y = x.to(self.device), y.to(self.device)
            loss = F.cross_entropy(self.model(x), y)
            self.optimizer.zero_grad()
            loss.backward()
            self.optimizer.step()
            total += loss.item() * len(y)
            n += len(y)
        return total / n

    def validate(self):
        self.model.eval()
        correct, n = 0, 0
        with torch.no_grad():
            for x, y in self.val_loader:
                pred = self.model(x.to(self.device)).argmax(dim=1).cpu()
                correct += (pred == y).sum().item()
                n += len(y)
        return correct / n

    def fit(self, epochs, out_path):
        self.model.train()
        for epoch in range(epochs):
            train_loss = self.train_one_epoch()
            val_acc = self.validate()
            if val_acc > self.best_acc:
                self.best_acc = val_acc
                torch.save(self.model.state_dict(), out_path)
            print(f"epoch {epoch}: loss {train_loss:.4f} val acc {val_acc:.4f} best {self.best_acc:.4f}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="pklot_patches.npz")
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--lr", type=float, default=1e-3)
    parser.add_argument("--out", default="stall_net.pt")
    args = parser.parse_args()
    data = np.load(args.data)
    train_set = TensorDataset(stall_batch(data["train_x"]), torch.from_numpy(data["train_y"]).long())
    val_set = TensorDataset(stall_batch(data["val_x"]), torch.from_numpy(data["val_y"]).long())
    train_loader = DataLoader(train_set, batch_size=64, shuffle=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=512)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    trainer = OccupancyTrainer(StallNet(), train_loader, val_loader, args.lr, device)
    trainer.fit(args.epochs, args.out)


if __name__ == "__main__":
    main()
