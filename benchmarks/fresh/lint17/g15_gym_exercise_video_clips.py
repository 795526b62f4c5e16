"""Classify gym exercises (squat, deadlift, bench press, ...) from short video clips with a
factorised (2+1)D convolutional network. Clips are pre-decoded to uint8 arrays of shape
(frames, height, width, 3).
"""
import argparse
import logging
import random
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, Dataset

log = logging.getLogger("clips")
MEAN = torch.tensor([0.43, 0.40, 0.37]).view(3, 1, 1, 1)
STD = torch.tensor([0.23, 0.22, 0.22]).view(3, 1, 1, 1)


def describe(tensor):
    labels = [f"{name or f'dim{i}'}={size}" for i, (name, size) in enumerate(zip(tensor.names, tensor.shape))]
    return f"{tensor.dtype} [{', '.join(labels)}] on {tensor.device}"


class ClipFolder(Dataset):
    def __init__(self, root, classes, frames, train):
        self.items = [(p, classes.index(p.parent.name)) for p in sorted(Path(root).glob("*/*.npy"))]
        self.frames = frames
        self.train = train

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        video = np.load(path, mmap_mode="r")
        t = video.shape[0]
        start = random.randint(0, max(t - self.frames, 0)) if self.train else max(t - self.frames, 0) // 2
        clip = torch.from_numpy(np.array(video[start:start + self.frames]))
        clip = clip.permute(3, 0, 1, 2).float().div(255.0)
        if self.train and random.random() < 0.5:
            clip = clip.flip(-1)
        return (clip - MEAN) / STD, label


class R2Plus1DBlock(nn.Module):
    def __init__(self, c_in, c_out, stride):
        super().__init__()
        mid = (c_in + c_out) // 2
        self.spatial = nn.Conv3d(c_in, mid, (1, 3, 3), stride=(1, stride, stride), padding=(0, 1, 1), bias=False)
        self.bn1 = nn.BatchNorm3d(mid)
        self.temporal = nn.Conv3d(mid, c_out, (3, 1, 1), stride=(stride, 1, 1), padding=(1, 0, 0), bias=False)
        self.bn2 = nn.BatchNorm3d(c_out)

    def forward(self, x):
        return F.relu(self.bn2(self.temporal(F.relu(self.bn1(self.spatial(x))))))


class ExerciseNet(nn.Module):
    def __init__(self, n_classes):
        super().__init__()
        self.blocks = nn.Sequential(R2Plus1DBlock(3, 32, 1), R2Plus1DBlock(32, 64, 2), R2Plus1DBlock(64, 128, 2))
        self.fc = nn.Linear(128, n_classes)

    def forward(self, x):
        return self.fc(self.blocks(x).mean(dim=(2, 3, 4)))


def run(model, loader, device, optimizer=None):
    correct = total = 0
    loss_sum = 0.0
    for step, (clips, labels) in enumerate(loader):
        clips, labels = clips.to(device), labels.to(device)
        if step == 0:
            log.info("input %s", describe(clips))
        logits = model(clips)
        loss = F.cross_entropy(logits, labels)
        if optimizer is not None:
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
        loss_sum += loss.item() * len(labels)
        correct += (logits.argmax(dim=1) == labels).sum().item()
        total += len(labels)
    return loss_sum / total, correct / total


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", default="data/gym_clips")
    ap.add_argument("--frames", type=int, default=16)
    ap.add_argument("--epochs", type=int, default=30)
    ap.add_argument("--batch-size", type=int, default=8)
    ap.add_argument("--lr", type=float, default=0.01)
    ap.add_argument("--out", default="runs/gym/exercise_net.pt")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(message)s")

    random.seed(0)
    np.random.seed(0)
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    classes = sorted(p.name for p in (Path(args.root) / "train").iterdir() if p.is_dir())
    train_dl = DataLoader(ClipFolder(Path(args.root) / "train", classes, args.frames, True),
                          batch_size=args.batch_size, shuffle=True, drop_last=True)
    valid_dl = DataLoader(ClipFolder(Path(args.root) / "valid", classes, args.frames, False), batch_size=args.batch_size)
    model = ExerciseNet(len(classes)).to(device)
    optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=0.9)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)
    best = 0.0
    for epoch in range(args.epochs):
        model.train()
        train_loss, train_acc = run(model, train_dl, device, optimizer)
        model.eval()
        with torch.no_grad():
            valid_loss, valid_acc = run(model, valid_dl, device)
        scheduler.step()
        log.info("epoch %d train %.3f/%.3f valid %.3f/%.3f", epoch, train_loss, train_acc, valid_loss, valid_acc)
        if valid_acc > best:
            best = valid_acc
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            torch.save({"model": model.state_dict(), "classes": classes}, args.out)


if __name__ == "__main__":
    main()
