import json
import random
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset

MEAN = np.array([0.329, 0.289, 0.207], dtype=np.float32)
STD = np.array([0.093, 0.097, 0.104], dtype=np.float32)


@dataclass
class Config:
    root: str = "data/plant_seedlings/train"
    out_dir: str = "runs/seedlings"
    size: int = 128
    batch_size: int = 32
    epochs: int = 30
    lr: float = 1e-3
    val_fraction: float = 0.15
    workers: int = 4
    seed: int = 13


def seed_everything(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def list_samples(root):
    classes = sorted(p.name for p in Path(root).iterdir() if p.is_dir())
    samples = []
    for idx, name in enumerate(classes):
        for path in sorted((Path(root) / name).glob("*.png")):
            samples.append((str(path), idx))
    return classes, samples


class SeedlingImages(Dataset):
    def __init__(self, samples, size, train):
        self.samples = samples
        self.size = size
        self.train = train

    def __len__(self):
        return len(self.samples)

    def load(self, path):
        with Image.open(path) as img:
            img = img.convert("RGB").resize((self.size, self.size), Image.BILINEAR)
            return np.asarray(img, dtype=np.float32) / 255.0

    def __getitem__(self, index):
        path, label = self.samples[index]
        arr = self.load(path)
        if self.train:
            if random.random() < 0.5:
                arr = arr[:, ::-1]
            if random.random() < 0.5:
                arr = arr[::-1, :]
            arr = np.rot90(arr, k=random.randint(0, 3))
        arr = (arr - MEAN) / STD
        return torch.from_numpy(np.ascontiguousarray(arr)), label


def conv_bn(cin, cout):
    return nn.Sequential(nn.Conv2d(cin, cout, 3, padding=1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True))


class SeedlingNet(nn.Module):
    def __init__(self, classes):
        super().__init__()
        self.features = nn.Sequential(
            conv_bn(3, 32), conv_bn(32, 32), nn.MaxPool2d(2),
            conv_bn(32, 64), conv_bn(64, 64), nn.MaxPool2d(2),
            conv_bn(64, 128), conv_bn(128, 128), nn.MaxPool2d(2),
            conv_bn(128, 256),
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.3), nn.Linear(256, classes))

    def forward(self, x):
        return self.head(self.pool(self.features(x)))


def save_preview(loader, classes, out_dir, count=16):
    images, labels = iter(loader).next()
    tiles = np.clip(images[:count].numpy() * STD + MEAN, 0.0, 1.0)
    tiles = (tiles * 255).astype(np.uint8)
    side = int(np.ceil(np.sqrt(len(tiles))))
    h, w = tiles.shape[1:3]
    canvas = np.zeros((side * h, side * w, 3), dtype=np.uint8)
    for i, tile in enumerate(tiles):
        r, c = divmod(i, side)
        canvas[r * h:(r + 1) * h, c * w:(c + 1) * w] = tile
    Image.fromarray(canvas).save(Path(out_dir) / "preview.png")
    names = [classes[i] for i in labels[:count].tolist()]
    (Path(out_dir) / "preview.txt").write_text("\n".join(names))


def run_epoch(model, loader, device, optimizer=None):
    training = optimizer is not None
    model.train(training)
    total, correct, loss_sum = 0, 0, 0.0
    with torch.set_grad_enabled(training):
        for images, labels in loader:
            images, labels = images.to(device), labels.to(device)
            logits = model(images)
            loss = F.cross_entropy(logits, labels, label_smoothing=0.05)
            if training:
                optimizer.zero_grad(set_to_none=True)
                loss.backward()
                optimizer.step()
            loss_sum += loss.item() * labels.size(0)
            correct += (logits.argmax(dim=1) == labels).sum().item()
            total += labels.size(0)
    return loss_sum / total, correct / total


def main(cfg=Config()):
    seed_everything(cfg.seed)
    out_dir = Path(cfg.out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    classes, samples = list_samples(cfg.root)
    random.Random(cfg.seed).shuffle(samples)
    n_val = int(len(samples) * cfg.val_fraction)
    train_set = SeedlingImages(samples[n_val:], cfg.size, train=True)
    val_set = SeedlingImages(samples[:n_val], cfg.size, train=False)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True, drop_last=True,
                              num_workers=cfg.workers, pin_memory=True)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_size * 2, num_workers=cfg.workers)
    save_preview(val_loader, classes, out_dir)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = SeedlingNet(len(classes)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=cfg.lr)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    best = 0.0
    for epoch in range(cfg.epochs):
        train_loss, train_acc = run_epoch(model, train_loader, device, optimizer)
        val_loss, val_acc = run_epoch(model, val_loader, device)
        scheduler.step()
        print(f"epoch {epoch:02d} train {train_loss:.3f}/{train_acc:.3f} val {val_loss:.3f}/{val_acc:.3f}")
        if val_acc > best:
            best = val_acc
            torch.save({"model": model.state_dict(), "classes": classes, "epoch": epoch}, out_dir / "best.pt")
    (out_dir / "summary.json").write_text(json.dumps({"best_val_acc": best, "config": asdict(cfg)}, indent=2))


if __name__ == "__main__":
    main()
