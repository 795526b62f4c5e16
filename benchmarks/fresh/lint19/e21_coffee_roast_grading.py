import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset

ROASTS = ["green", "light", "medium", "medium_dark", "dark"]


class RoastNet(nn.Module):
    def __init__(self, n_classes=len(ROASTS), temperature=1.0):
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(3, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(32, 64, 3, padding=1), nn.BatchNorm2d(64), nn.ReLU(), nn.MaxPool2d(2),
            nn.Conv2d(64, 128, 3, padding=1), nn.BatchNorm2d(128), nn.ReLU(),
            nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        )
        self.classifier = nn.Sequential(nn.Dropout(0.3), nn.Linear(128, n_classes))
        self.register_buffer("temperature", torch.tensor(temperature))

    def forward(self, x):
        logits = self.classifier(self.features(x))
        return F.softmax(logits / self.temperature, dim=1)


def bean_tensors(path):
    d = np.load(path)
    x = torch.from_numpy(d["images"]).permute(0, 3, 1, 2).float() / 255.0
    x = (x - 0.45) / 0.22
    return TensorDataset(x, torch.from_numpy(d["roast"]).long())


def evaluate(model, loader, criterion):
    model.eval()
    loss_sum = hits = n = 0
    with torch.no_grad():
        for x, y in loader:
            probs = model(x)
            loss_sum += criterion(probs, y).item() * len(y)
            hits += (probs.argmax(1) == y).sum().item()
            n += len(y)
    return loss_sum / n, hits / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", type=Path, default=Path("data/coffee_beans"))
    ap.add_argument("--epochs", type=int, default=12)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--eval-every", type=int, default=200)
    args = ap.parse_args()

    torch.manual_seed(10)
    train_dl = DataLoader(bean_tensors(args.data / "train.npz"), batch_size=64, shuffle=True, drop_last=True)
    val_dl = DataLoader(bean_tensors(args.data / "val.npz"), batch_size=256)
    model = RoastNet()
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)

    step = 0
    best_acc = 0.0
    model.train()
    for epoch in range(args.epochs):
        for x, y in train_dl:
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            step += 1
            if step % args.eval_every == 0:
                val_loss, val_acc = evaluate(model, val_dl, criterion)
                print(f"step {step} epoch {epoch} train {loss.item():.4f} val {val_loss:.4f} acc {val_acc:.3f}")
                if val_acc > best_acc:
                    best_acc = val_acc
                    torch.save(model.state_dict(), args.data / "roast_net_best.pt")
    print(f"best validation accuracy {best_acc:.3f}")


if __name__ == "__main__":
    main()
