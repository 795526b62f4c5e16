"""Land-use classification of 64x64 RGB satellite patches (EuroSAT-style folders) with a small CNN.

patches.npz holds images (N, 64, 64, 3) uint8, labels (N,) and a `split` array
("train"/"val"/"test") assigned by geographic tile, so neighbouring patches never straddle splits.
"""
import argparse
import copy
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset, get_worker_info

CLASSES = ["AnnualCrop", "Forest", "HerbaceousVegetation", "Highway", "Industrial", "Pasture",
           "PermanentCrop", "Residential", "River", "SeaLake"]


class Patches(Dataset):
    def __init__(self, images, labels, mean, std, augment, seed=0):
        self.images, self.labels = images, labels
        self.mean = mean.reshape(3, 1, 1).astype(np.float32)
        self.std = std.reshape(3, 1, 1).astype(np.float32)
        self.augment = augment
        self.rng = np.random.default_rng(seed)

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        x = self.images[i].transpose(2, 0, 1).astype(np.float32) / 255.0
        if self.augment:
            x = np.rot90(x, k=int(self.rng.integers(4)), axes=(1, 2))
            if self.rng.random() < 0.5:
                x = x[:, :, ::-1]
            x = x * self.rng.uniform(0.9, 1.1)
        x = (x - self.mean) / self.std
        return torch.from_numpy(np.ascontiguousarray(x, dtype=np.float32)), int(self.labels[i])


def seed_worker(worker_id):
    info = get_worker_info()
    info.dataset.rng = np.random.default_rng(info.seed % 2**32)


def conv_bn(ci, co, stride=1):
    return nn.Sequential(nn.Conv2d(ci, co, 3, stride=stride, padding=1, bias=False), nn.BatchNorm2d(co), nn.ReLU(inplace=True))


class PatchNet(nn.Module):
    def __init__(self, n_classes, widths=(32, 64, 128, 256)):
        super().__init__()
        stages, prev = [], 3
        for w in widths:
            stages.append(nn.Sequential(conv_bn(prev, w, stride=2), conv_bn(w, w)))
            prev = w
        self.stages = nn.ModuleList(stages)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(prev, n_classes)

    def forward(self, x):
        for stage in self.stages:
            x = stage(x)
        return self.fc(torch.flatten(self.pool(x), 1))


def run_eval(model, loader, device):
    model.eval()
    loss_sum, correct, n = 0.0, 0, 0
    with torch.no_grad():
        for x, y in loader:
            x, y = x.to(device), y.to(device)
            logits = model(x)
            loss_sum += F.cross_entropy(logits, y, reduction="sum").item()
            correct += (logits.argmax(dim=1) == y).sum().item()
            n += y.numel()
    return loss_sum / n, correct / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--data", default="data/eurosat_patches.npz")
    ap.add_argument("--epochs", type=int, default=40)
    ap.add_argument("--batch-size", type=int, default=128)
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--seed", type=int, default=13)
    args = ap.parse_args()

    random.seed(args.seed)
    np.random.seed(args.seed)
    torch.manual_seed(args.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")

    d = np.load(args.data)
    images, labels, split = d["images"], d["labels"], d["split"]
    train_idx = np.flatnonzero(split == "train")
    mean = images[train_idx].reshape(-1, 3).mean(axis=0) / 255.0
    std = images[train_idx].reshape(-1, 3).std(axis=0) / 255.0

    def make(name, augment):
        idx = np.flatnonzero(split == name)
        return Patches(images[idx], labels[idx], mean, std, augment, seed=args.seed)

    g = torch.Generator().manual_seed(args.seed)
    train_loader = DataLoader(make("train", True), batch_size=args.batch_size, shuffle=True, drop_last=True,
                              num_workers=4, worker_init_fn=seed_worker, generator=g, persistent_workers=True)
    val_loader = DataLoader(make("val", False), batch_size=512, num_workers=2)
    test_loader = DataLoader(make("test", False), batch_size=512, num_workers=2)

    model = PatchNet(len(CLASSES)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc, best_state = 0.0, None
    for epoch in range(args.epochs):
        model.train()
        for x, y in train_loader:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = F.cross_entropy(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        scheduler.step()
        val_loss, val_acc = run_eval(model, val_loader, device)
        print(f"epoch {epoch:02d}  val loss {val_loss:.4f}  val acc {val_acc:.4f}")
        if val_acc > best_acc:
            best_acc, best_state = val_acc, copy.deepcopy(model.state_dict())

    model.load_state_dict(best_state)
    test_loss, test_acc = run_eval(model, test_loader, device)
    print(f"test loss {test_loss:.4f}  test acc {test_acc:.4f}")
    torch.save({"model": best_state, "mean": torch.from_numpy(mean.astype(np.float32)),
                "std": torch.from_numpy(std.astype(np.float32))}, "patchnet_best.pt")


if __name__ == "__main__":
    main()
