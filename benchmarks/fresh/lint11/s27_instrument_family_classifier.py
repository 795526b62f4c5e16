"""Instrument family (11 classes) from 4-second NSynth notes, on precomputed log-mel spectrograms.

The best checkpoint is picked up by the tagging service from runs/nsynth_family/best.pt.
"""
import json
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
from torch.utils.data import DataLoader, Dataset

FAMILIES = ["bass", "brass", "flute", "guitar", "keyboard", "mallet", "organ", "reed", "string", "synth_lead", "vocal"]


@dataclass
class Options:
    root: str = "data/nsynth_mels"
    batch_size: int = 64
    epochs: int = 20
    lr: float = 1e-3
    weight_decay: float = 0.0
    channels: tuple = (32, 64, 128, 256)
    seed: int = 4
    out_dir: str = "runs/nsynth_family"


class NSynthMels(Dataset):
    def __init__(self, root, split):
        meta = json.loads((Path(root) / f"{split}.json").read_text())
        self.items = [(Path(root) / split / f"{name}.npy", FAMILIES.index(info["instrument_family_str"]))
                      for name, info in sorted(meta.items())]

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        path, label = self.items[i]
        mel = np.load(path).astype(np.float32)
        mel = (mel - mel.mean()) / (mel.std() + 1e-6)
        return torch.from_numpy(mel).unsqueeze(0), label


def build_classifier(channels, n_classes=len(FAMILIES), dropout=0.3):
    layers, prev = [], 1
    for c in channels:
        layers += [nn.Conv2d(prev, c, 3, padding=1, bias=False), nn.BatchNorm2d(c), nn.ReLU(inplace=True),
                   nn.MaxPool2d(2)]
        prev = c
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(dropout), nn.Linear(prev, n_classes),
               nn.Softmax(dim=1)]
    return nn.Sequential(*layers)


def run_epoch(model, loader, criterion, device, optimizer=None):
    train = optimizer is not None
    model.train(train)
    loss_sum, correct, n = 0.0, 0, 0
    with torch.set_grad_enabled(train):
        for mel, label in loader:
            mel, label = mel.to(device), label.to(device)
            probs = model(mel)
            loss = criterion(probs, label)
            if train:
                optimizer.zero_grad()
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * label.size(0)
            correct += (probs.argmax(1) == label).sum().item()
            n += label.size(0)
    return loss_sum / n, correct / n


def main(opt=Options()):
    random.seed(opt.seed)
    np.random.seed(opt.seed)
    torch.manual_seed(opt.seed)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    out_dir = Path(opt.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    train_loader = DataLoader(NSynthMels(opt.root, "train"), batch_size=opt.batch_size, shuffle=True,
                              num_workers=6, drop_last=True)
    valid_loader = DataLoader(NSynthMels(opt.root, "valid"), batch_size=256, num_workers=6)

    model = build_classifier(opt.channels).to(device)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.AdamW(model.parameters(), lr=opt.lr, weight_decay=opt.weight_decay)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=opt.epochs)

    best = 0.0
    for epoch in range(opt.epochs):
        tr_loss, tr_acc = run_epoch(model, train_loader, criterion, device, optimizer)
        va_loss, va_acc = run_epoch(model, valid_loader, criterion, device)
        scheduler.step()
        print(f"epoch {epoch:02d}  train {tr_loss:.4f}/{tr_acc:.3f}  valid {va_loss:.4f}/{va_acc:.3f}")
        if va_acc > best:
            best = va_acc
            torch.save(model.state_dict(), out_dir / "best.pt")
    (out_dir / "families.json").write_text(json.dumps(FAMILIES))
    print(f"best valid accuracy {best:.4f}")


if __name__ == "__main__":
    main()
