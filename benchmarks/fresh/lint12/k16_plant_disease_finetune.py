"""Fine-tune ResNet-50 on Plant Pathology 2021 (6 single-label classes after cleaning), on all
visible GPUs with DataParallel. After training, the checkpoints of the last epochs are
averaged, BatchNorm statistics are recomputed, and the averaged model is evaluated.
"""
from dataclasses import dataclass
from pathlib import Path

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.optim.swa_utils import update_bn
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

CLASSES = ["healthy", "scab", "rust", "frog_eye_leaf_spot", "complex", "powdery_mildew"]


@dataclass
class Config:
    images: Path = Path("data/plant_pathology_2021/train_images")
    folds_csv: Path = Path("data/plant_pathology_2021/train_folds.csv")
    valid_fold: int = 0
    size: int = 384
    batch_size: int = 48
    epochs: int = 18
    average_last: int = 5
    lr: float = 1e-3
    out: Path = Path("runs/plant_r50")


class LeafImages(Dataset):
    def __init__(self, frame, root, train, size):
        self.files, self.labels, self.root = frame["image"].tolist(), frame["label"].tolist(), root
        aug = [transforms.RandomResizedCrop(size, scale=(0.5, 1.0)), transforms.RandomHorizontalFlip(),
               transforms.RandomVerticalFlip(), transforms.ColorJitter(0.2, 0.2, 0.2)]
        plain = [transforms.Resize(size), transforms.CenterCrop(size)]
        self.tf = transforms.Compose((aug if train else plain) + [
            transforms.ToTensor(), transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])])

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        return self.tf(Image.open(self.root / self.files[i]).convert("RGB")), self.labels[i]


def average_checkpoints(paths):
    avg = torch.load(paths[0], map_location="cpu", weights_only=True)
    for path in paths[1:]:
        state = torch.load(path, map_location="cpu", weights_only=True)
        for key in avg:
            avg[key] += state[key]
    for key in avg:
        avg[key] /= len(paths)
    return avg


class FineTuner:
    def __init__(self, cfg, device):
        self.cfg, self.device = cfg, device
        net = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        net.fc = nn.Linear(net.fc.in_features, len(CLASSES))
        self.net = net.to(device)
        self.model = nn.DataParallel(self.net) if torch.cuda.device_count() > 1 else self.net
        self.optimizer = torch.optim.SGD(self.net.parameters(), lr=cfg.lr, momentum=0.9, nesterov=True)
        self.scheduler = None
        self.saved = []

    def on_fit_start(self, steps_per_epoch):
        self.scheduler = torch.optim.lr_scheduler.OneCycleLR(
            self.optimizer, max_lr=self.cfg.lr, epochs=self.cfg.epochs, steps_per_epoch=steps_per_epoch)
        self.cfg.out.mkdir(parents=True, exist_ok=True)

    def on_epoch_end(self, epoch, metrics):
        path = self.cfg.out / f"epoch_{epoch:02d}.pt"
        torch.save(self.net.state_dict(), path)
        self.saved.append(path)
        print(f"epoch {epoch:2d} " + " ".join(f"{k} {v:.4f}" for k, v in metrics.items()))

    def train_epoch(self, loader):
        self.model.train()
        total, n = 0.0, 0
        for x, y in loader:
            x, y = x.to(self.device, non_blocking=True), y.to(self.device, non_blocking=True)
            loss = F.cross_entropy(self.model(x), y, label_smoothing=0.1)
            self.optimizer.zero_grad(set_to_none=True)
            loss.backward()
            self.optimizer.step()
            self.scheduler.step()
            total, n = total + loss.item() * len(y), n + len(y)
        return total / n

    @torch.no_grad()
    def evaluate(self, loader):
        self.model.eval()
        correct = n = 0
        for x, y in loader:
            pred = self.model(x.to(self.device)).argmax(dim=1).cpu()
            correct, n = correct + int((pred == y).sum()), n + len(y)
        return correct / n

    def fit(self, train_dl, valid_dl):
        self.on_fit_start(len(train_dl))
        for epoch in range(self.cfg.epochs):
            loss = self.train_epoch(train_dl)
            self.on_epoch_end(epoch, {"train_loss": loss, "valid_acc": self.evaluate(valid_dl)})


def main(cfg=Config()):
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    df = pd.read_csv(cfg.folds_csv)
    df = df[df["labels"].isin(CLASSES)].assign(label=lambda d: d["labels"].map(CLASSES.index))
    train_df, valid_df = df[df["fold"] != cfg.valid_fold], df[df["fold"] == cfg.valid_fold]
    train_dl = DataLoader(LeafImages(train_df, cfg.images, True, cfg.size), batch_size=cfg.batch_size,
                          shuffle=True, drop_last=True, num_workers=8, pin_memory=True)
    valid_dl = DataLoader(LeafImages(valid_df, cfg.images, False, cfg.size), batch_size=96, num_workers=8)

    tuner = FineTuner(cfg, device)
    tuner.fit(train_dl, valid_dl)

    tuner.net.load_state_dict(average_checkpoints(tuner.saved[-cfg.average_last:]))
    update_bn(train_dl, tuner.model, device=device)
    print(f"averaged last {cfg.average_last} epochs: valid acc {tuner.evaluate(valid_dl):.4f}")
    torch.save(tuner.net.state_dict(), cfg.out / "averaged.pt")


if __name__ == "__main__":
    main()
