"""American Sign Language letters (Sign Language MNIST, 24 static letters) with a CNN from scratch.

sign_mnist_train.csv / sign_mnist_test.csv: column `label` (0-24, J=9 and Z=25 absent) and
784 pixel columns of a 28x28 grayscale image.
"""
import random
import time

import numpy as np
import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

CFG = {
    "train_csv": "data/sign_mnist_train.csv",
    "test_csv": "data/sign_mnist_test.csv",
    "num_classes": 25,
    "batch_size": 128,
    "epochs": 15,
    "optim": {"name": "sgd", "lr": 1e-6, "momentum": 0.9, "nesterov": True},
    "label_smoothing": 0.0,
    "seed": 0,
    "checkpoint": "asl_cnn.pt",
}


class SignMNIST(Dataset):
    def __init__(self, csv_path, augment):
        df = pd.read_csv(csv_path)
        self.labels = torch.from_numpy(df["label"].to_numpy(np.int64))
        pixels = df.drop(columns="label").to_numpy(np.float32) / 255.0
        self.images = torch.from_numpy((pixels - 0.5) / 0.5).view(-1, 1, 28, 28)
        self.augment = augment

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = self.images[i]
        if self.augment:
            dx, dy = random.randint(-2, 2), random.randint(-2, 2)
            img = torch.roll(img, shifts=(dy, dx), dims=(1, 2))
            if random.random() < 0.3:
                img = img + 0.05 * torch.randn_like(img)
        return img, self.labels[i]


class SignNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        def block(ci, co):
            return nn.Sequential(nn.Conv2d(ci, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
                                 nn.Conv2d(co, co, 3, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True),
                                 nn.MaxPool2d(2))
        self.body = nn.Sequential(block(1, 32), block(32, 64), block(64, 128))
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.4), nn.Linear(128 * 3 * 3, 256),
                                  nn.ReLU(inplace=True), nn.Linear(256, n_classes))

    def forward(self, x):
        return self.head(self.body(x))


def make_optimizer(params, spec):
    spec = dict(spec)
    name = spec.pop("name")
    if name == "sgd":
        return torch.optim.SGD(params, **spec)
    if name == "adamw":
        return torch.optim.AdamW(params, **spec)
    raise ValueError(f"unknown optimizer {name}")


def evaluate(model, loader, device):
    model.eval()
    correct, total, loss_sum = 0, 0, 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(1) == y).sum().item()
            total += y.size(0)
    return loss_sum / total, correct / total


def main(cfg=CFG):
    random.seed(cfg["seed"])
    np.random.seed(cfg["seed"])
    torch.manual_seed(cfg["seed"])
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    train_loader = DataLoader(SignMNIST(cfg["train_csv"], augment=True), batch_size=cfg["batch_size"],
                              shuffle=True, drop_last=True, num_workers=2)
    test_loader = DataLoader(SignMNIST(cfg["test_csv"], augment=False), batch_size=512)

    model = SignNet(cfg["num_classes"]).to(device)
    optimizer = make_optimizer(model.parameters(), cfg["optim"])
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["epochs"] * len(train_loader))

    best_acc = 0.0
    for epoch in range(cfg["epochs"]):
        model.train()
        t0, run_loss, seen = time.time(), 0.0, 0
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.cross_entropy(model(x), y, label_smoothing=cfg["label_smoothing"])
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            run_loss += loss.item() * y.size(0)
            seen += y.size(0)
        test_loss, test_acc = evaluate(model, test_loader, device)
        print(f"epoch {epoch + 1:2d}  train loss {run_loss / seen:.4f}  test loss {test_loss:.4f}"
              f"  test acc {test_acc:.4f}  ({time.time() - t0:.1f}s)")
        if test_acc > best_acc:
            best_acc = test_acc
            torch.save(model.state_dict(), cfg["checkpoint"])
    print(f"best test accuracy {best_acc:.4f}")


if __name__ == "__main__":
    main()
