import argparse
import json
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

CLASSES = ("clear", "haze", "smoke")
MEAN = torch.tensor([0.485, 0.456, 0.406]).view(3, 1, 1)
STD = torch.tensor([0.229, 0.224, 0.225]).view(3, 1, 1)


def load_frame(path, size):
    img = Image.open(path).convert("RGB").resize((size, size), Image.BILINEAR)
    arr = np.asarray(img, dtype=np.float32) / 255.0
    h, w, c = arr.shape
    x = torch.from_numpy(arr).reshape(c, h, w)
    return (x - MEAN) / STD


class TowerCamFrames(Dataset):
    def __init__(self, root, size):
        self.size = size
        self.items = []
        for label, name in enumerate(CLASSES):
            for path in sorted((Path(root) / name).glob("*.jpg")):
                self.items.append((path, label))

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        return load_frame(path, self.size), label


def conv_block(cin, cout):
    return nn.Sequential(
        nn.Conv2d(cin, cout, 3, padding=1, bias=False),
        nn.BatchNorm2d(cout),
        nn.ReLU(),
        nn.MaxPool2d(2),
    )


class SmokeNet(nn.Module):
    def __init__(self, width=32, n_classes=len(CLASSES)):
        super().__init__()
        self.features = nn.Sequential(conv_block(3, width), conv_block(width, 2 * width), conv_block(2 * width, 4 * width))
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(4 * width, n_classes)

    def forward(self, x):
        return self.fc(self.pool(self.features(x)).flatten(1))


def make_loader(dataset, cfg, train):
    return DataLoader(dataset, batch_size=cfg["batch_size"], num_workers=cfg["workers"], drop_last=train, pin_memory=torch.cuda.is_available())


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total_loss, correct, seen = 0.0, 0, 0
    with torch.set_grad_enabled(training):
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            if training:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            total_loss += loss.item() * y.size(0)
            correct += (logits.argmax(dim=1) == y).sum().item()
            seen += y.size(0)
    return total_loss / seen, correct / seen


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--config", default="smoke.json")
    parser.add_argument("--out", default="smoke_net.pt")
    args = parser.parse_args()
    cfg = {"root": "frames", "size": 128, "batch_size": 32, "workers": 4, "epochs": 20, "lr": 3e-4}
    if Path(args.config).exists():
        cfg.update(json.loads(Path(args.config).read_text()))
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = make_loader(TowerCamFrames(Path(cfg["root"]) / "train", cfg["size"]), cfg, train=True)
    val_loader = make_loader(TowerCamFrames(Path(cfg["root"]) / "val", cfg["size"]), cfg, train=False)
    model = SmokeNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg["lr"])
    best = 0.0
    for epoch in range(cfg["epochs"]):
        train_loss, train_acc = run_epoch(model, train_loader, device, optimizer)
        val_loss, val_acc = run_epoch(model, val_loader, device)
        print(f"epoch {epoch}: train {train_loss:.4f}/{train_acc:.3f} val {val_loss:.4f}/{val_acc:.3f}")
        if val_acc > best:
            best = val_acc
            torch.save(model.state_dict(), args.out)


if __name__ == "__main__":
    main()
