"""Clip-level sound event tagging on FSD50K (200 classes, multi-label) from precomputed log-mels.

features/<split>/<fname>.npy : (64 mel bins, T frames) float32, 10 ms hop
ground_truth/<split>.csv     : fname,labels  (labels comma-separated vocabulary names)
"""
import argparse
import csv
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from sklearn.metrics import average_precision_score
from torch.utils.data import DataLoader, Dataset


def parse():
    p = argparse.ArgumentParser()
    p.add_argument("--root", type=Path, default=Path("data/fsd50k"))
    p.add_argument("--frames", type=int, default=1000)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--epochs", type=int, default=40)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--workers", type=int, default=6)
    return p.parse_args()


def read_vocab(root):
    with open(root / "ground_truth" / "vocabulary.csv") as f:
        return [row[1] for row in csv.reader(f)]


class LogMelClips(Dataset):
    def __init__(self, root, split, vocab, frames, train):
        index = {name: i for i, name in enumerate(vocab)}
        with open(root / "ground_truth" / f"{split}.csv") as f:
            rows = list(csv.DictReader(f))
        self.files = [root / "features" / split / f"{r['fname']}.npy" for r in rows]
        self.targets = torch.zeros(len(rows), len(vocab))
        for i, r in enumerate(rows):
            self.targets[i, [index[l] for l in r["labels"].split(",")]] = 1.0
        self.frames, self.train = frames, train

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        mel = torch.from_numpy(np.load(self.files[i]))
        t = mel.shape[1]
        if t < self.frames:
            mel = torch.nn.functional.pad(mel, (0, self.frames - t), value=float(mel.min()))
        elif self.train:
            start = int(torch.randint(0, t - self.frames + 1, ()))
            mel = mel[:, start:start + self.frames]
        else:
            mel = mel[:, :self.frames]
        mel = (mel + 4.5) / 5.0
        if self.train:
            f0 = int(torch.randint(0, 56, ()))
            mel[f0:f0 + int(torch.randint(0, 8, ()))] = 0.0
        return mel.unsqueeze(0), self.targets[i]


class ConvBlock(nn.Sequential):
    def __init__(self, cin, cout):
        super().__init__(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
                         nn.Conv2d(cout, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(True),
                         nn.AvgPool2d(2))


class Tagger(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.features = nn.Sequential(ConvBlock(1, 64), ConvBlock(64, 128), ConvBlock(128, 256),
                                      ConvBlock(256, 512))
        self.fc = nn.Sequential(nn.Dropout(0.3), nn.Linear(512, 512), nn.ReLU(True))
        self.classifier = nn.Sequential(nn.Linear(512, n_classes), nn.Sigmoid())

    def forward(self, x):
        h = self.features(x).mean(dim=2)
        h = h.amax(dim=2) + h.mean(dim=2)
        return self.classifier(self.fc(h))


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    outputs, targets = [], []
    for x, y in loader:
        outputs.append(model(x.to(device)).cpu())
        targets.append(y)
    outputs, targets = torch.cat(outputs).numpy(), torch.cat(targets).numpy()
    present = targets.sum(0) > 0
    return average_precision_score(targets[:, present], outputs[:, present], average="macro")


def main():
    args = parse()
    torch.manual_seed(1)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    vocab = read_vocab(args.root)
    train_ds = LogMelClips(args.root, "dev", vocab, args.frames, train=True)
    eval_ds = LogMelClips(args.root, "eval", vocab, args.frames, train=False)
    train_dl = DataLoader(train_ds, batch_size=args.batch_size, shuffle=True, drop_last=True,
                          num_workers=args.workers, pin_memory=True)
    eval_dl = DataLoader(eval_ds, batch_size=128, num_workers=args.workers)

    model = Tagger(len(vocab)).to(device)
    criterion = nn.BCEWithLogitsLoss()
    optimizer = torch.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_map = 0.0
    for epoch in range(args.epochs):
        model.train()
        running, count = 0.0, 0
        for x, y in train_dl:
            x, y = x.to(device, non_blocking=True), y.to(device, non_blocking=True)
            loss = criterion(model(x), y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            running += loss.item() * x.size(0)
            count += x.size(0)
        scheduler.step()
        m_ap = evaluate(model, eval_dl, device)
        print(f"epoch {epoch:2d} loss {running / count:.4f} eval mAP {m_ap:.4f}")
        if m_ap > best_map:
            best_map = m_ap
            torch.save(model.state_dict(), "fsd50k_tagger.pt")


if __name__ == "__main__":
    main()
