import argparse
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

GROUPS = ("healthy", "caries")
MEAN = torch.tensor([0.60, 0.45, 0.42]).view(3, 1, 1)
STD = torch.tensor([0.18, 0.17, 0.17]).view(3, 1, 1)


def read_photo(path, size):
    img = Image.open(path).convert("RGB").resize((size, size))
    arr = np.array(img, dtype=np.float32) / 255.0
    x = torch.from_numpy(arr).permute(2, 0, 1)
    return (x - MEAN) / STD


class ToothPhotos(Dataset):
    def __init__(self, folder, size, augment):
        self.samples = [(p, g) for g, name in enumerate(GROUPS) for p in sorted((Path(folder) / name).glob("*.png"))]
        self.size, self.augment = size, augment

    def __len__(self):
        return len(self.samples)

    def __getitem__(self, i):
        path, group = self.samples[i]
        x = read_photo(path, self.size)
        if self.augment and torch.rand(()) < 0.5:
            x = x.flip(-1)
        return x, torch.tensor(group, dtype=torch.float32)


def loader_for(folder, args, train):
    dataset = ToothPhotos(folder, args.size, augment=train)
    return DataLoader(dataset, batch_size=args.batch_size, shuffle=train, drop_last=train, num_workers=args.workers)


def conv_bn(cin, cout, stride):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU())


class CariesNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(conv_bn(3, 32, 2), conv_bn(32, 32, 1), conv_bn(32, 64, 2), conv_bn(64, 128, 2), conv_bn(128, 128, 2))
        self.fc = nn.Linear(128, 1)

    def forward(self, x):
        return self.fc(self.stem(x).mean(dim=(2, 3))).squeeze(1)


def evaluate(model, loader, device):
    model.eval()
    hits = n = 0
    loss_sum = 0.0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logit = model(x)
            loss_sum += F.binary_cross_entropy_with_logits(logit, y, reduction="sum").item()
            hits += ((torch.sigmoid(logit) > 0.5).float() == y).sum().item()
            n += len(y)
    return loss_sum / n, hits / n


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--root", default="intraoral")
    parser.add_argument("--size", type=int, default=160)
    parser.add_argument("--batch-size", type=int, default=32)
    parser.add_argument("--workers", type=int, default=4)
    parser.add_argument("--epochs", type=int, default=25)
    args = parser.parse_args()
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_loader = loader_for(Path(args.root) / "train", args, train=True)
    val_loader = loader_for(Path(args.root) / "val", args, train=False)
    model = CariesNet().to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device), y.to(device)
            loss = F.binary_cross_entropy_with_logits(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        val_loss, val_acc = evaluate(model, val_loader, device)
        print(f"epoch {epoch}: val loss {val_loss:.4f} acc {val_acc:.3f}")
    torch.save(model.state_dict(), "caries_net.pt")


if __name__ == "__main__":
    main()
