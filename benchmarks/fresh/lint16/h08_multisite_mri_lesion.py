"""Slice-level white-matter lesion detection on FLAIR MRI pooled from several scanner sites.

Each batch is drawn from a single site so that BatchNorm statistics are never mixed across
scanners.
"""
import argparse
import os
import random

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import ConcatDataset, DataLoader, Dataset, Sampler


class SiteSlices(Dataset):
    def __init__(self, site_dir):
        self.images = np.load(os.path.join(site_dir, "slices.npy"), mmap_mode="r")
        self.labels = np.load(os.path.join(site_dir, "labels.npy"))
        stats = np.load(os.path.join(site_dir, "intensity_stats.npy"))
        self.mean, self.std = float(stats[0]), float(stats[1])

    def __len__(self):
        return len(self.labels)

    def __getitem__(self, i):
        img = torch.from_numpy(np.array(self.images[i], dtype=np.float32))
        img = (img - self.mean) / self.std
        return img.unsqueeze(0), int(self.labels[i])


class SiteBatchSampler(Sampler):
    def __init__(self, dataset, batch_size, shuffle=True, seed=0):
        super().__init__()
        self.bounds = [0] + list(dataset.cummulative_sizes)
        self.batch_size = batch_size
        self.shuffle = shuffle
        self.seed = seed
        self.epoch = 0

    def set_epoch(self, epoch):
        self.epoch = epoch

    def _batches(self):
        g = torch.Generator().manual_seed(self.seed + self.epoch)
        batches = []
        for start, stop in zip(self.bounds[:-1], self.bounds[1:]):
            idx = torch.arange(start, stop)
            if self.shuffle:
                idx = idx[torch.randperm(len(idx), generator=g)]
            chunks = idx.split(self.batch_size)
            batches += [c.tolist() for c in chunks if len(c) == self.batch_size]
        if self.shuffle:
            order = torch.randperm(len(batches), generator=g).tolist()
            batches = [batches[i] for i in order]
        return batches

    def __iter__(self):
        return iter(self._batches())

    def __len__(self):
        return len(self._batches())


def conv_block(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout),
                         nn.ReLU(inplace=True), nn.Conv2d(cout, cout, 3, padding=1, bias=False),
                         nn.BatchNorm2d(cout), nn.ReLU(inplace=True), nn.MaxPool2d(2))


class LesionNet(nn.Module):
    def __init__(self, width=24):
        super().__init__()
        self.body = nn.Sequential(conv_block(1, width), conv_block(width, 2 * width),
                                  conv_block(2 * width, 4 * width), conv_block(4 * width, 8 * width))
        self.fc = nn.Linear(8 * width, 2)

    def forward(self, x):
        return self.fc(F.adaptive_avg_pool2d(self.body(x), 1).flatten(1))


def evaluate(model, loader, device):
    model.eval()
    correct = seen = 0
    with torch.no_grad():
        for x, y in loader:
            pred = model(x.to(device)).argmax(1).cpu()
            correct += (pred == y).sum().item()
            seen += y.numel()
    return correct / max(seen, 1)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--sites", nargs="+", default=["data/mri/site_a", "data/mri/site_b", "data/mri/site_c"])
    ap.add_argument("--val-site", default="data/mri/site_d")
    ap.add_argument("--epochs", type=int, default=20)
    ap.add_argument("--batch-size", type=int, default=16)
    ap.add_argument("--lr", type=float, default=5e-4)
    ap.add_argument("--out", default="checkpoints/lesion_net.pt")
    args = ap.parse_args()

    random.seed(3)
    np.random.seed(3)
    torch.manual_seed(3)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_set = ConcatDataset([SiteSlices(d) for d in args.sites])
    sampler = SiteBatchSampler(train_set, args.batch_size)
    train_dl = DataLoader(train_set, batch_sampler=sampler)
    val_dl = DataLoader(SiteSlices(args.val_site), batch_size=args.batch_size)

    model = LesionNet().to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True)
    best = 0.0
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)
        model.train()
        for x, y in train_dl:
            x, y = x.to(device), y.to(device)
            optimizer.zero_grad()
            loss = F.cross_entropy(model(x), y)
            loss.backward()
            optimizer.step()
        acc = evaluate(model, val_dl, device)
        print(f"epoch {epoch}: held-out site accuracy {acc:.3f}")
        if acc > best:
            best = acc
            os.makedirs(os.path.dirname(args.out) or ".", exist_ok=True)
            torch.save({"model": model.state_dict(), "epoch": epoch, "acc": acc}, args.out)


if __name__ == "__main__":
    main()
