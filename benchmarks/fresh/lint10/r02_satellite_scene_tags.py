"""Atmospheric and land-cover tags for 256 px satellite chips (Planet Amazon style).

Each chip carries one weather tag and any number of land tags, listed in tags.csv as
`image_name,tags` with the tags separated by spaces.
"""
import csv
import random
from dataclasses import dataclass, field
from pathlib import Path

import torch
import torch.nn as nn
import torchvision
from PIL import Image
from torch.utils.data import DataLoader, Dataset, random_split
from torchvision import transforms as T

TAGS = [
    "clear", "cloudy", "haze", "partly_cloudy", "agriculture", "artisinal_mine", "bare_ground",
    "blooming", "blow_down", "conventional_mine", "cultivation", "habitation", "primary",
    "road", "selective_logging", "slash_burn", "water",
]


@dataclass
class Config:
    root: Path = Path("data/planet")
    image_size: int = 224
    batch_size: int = 48
    epochs: int = 20
    lr: float = 1e-3
    label_smoothing: float = 0.05
    threshold: float = 0.5
    valid_fraction: float = 0.1
    seed: int = 3
    out: Path = Path("runs/planet_tags.pt")
    mean: tuple = field(default=(0.311, 0.340, 0.299))
    std: tuple = field(default=(0.167, 0.144, 0.138))


class PlanetChips(Dataset):
    def __init__(self, cfg: Config, transform):
        with open(cfg.root / "tags.csv") as f:
            rows = list(csv.DictReader(f))
        self.files = [cfg.root / "train-jpg" / f"{r['image_name']}.jpg" for r in rows]
        self.tags = [r["tags"].split() for r in rows]
        self.index = {t: i for i, t in enumerate(TAGS)}
        self.transform = transform

    def __len__(self):
        return len(self.files)

    def __getitem__(self, i):
        image = self.transform(Image.open(self.files[i]).convert("RGB"))
        target = torch.zeros(len(TAGS))
        target[[self.index[t] for t in self.tags[i]]] = 1.0
        return image, target


def build_model(num_tags):
    net = torchvision.models.resnet34(weights=torchvision.models.ResNet34_Weights.DEFAULT)
    net.fc = nn.Sequential(nn.Dropout(0.2), nn.Linear(net.fc.in_features, num_tags))
    return net


class TagTrainer:
    def __init__(self, cfg: Config, model, device):
        self.cfg = cfg
        self.model = model.to(device)
        self.device = device
        self.criterion = nn.CrossEntropyLoss(label_smoothing=cfg.label_smoothing)
        self.optimizer = torch.optim.SGD(model.parameters(), lr=cfg.lr, momentum=0.9, nesterov=True)
        self.scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(self.optimizer, T_max=cfg.epochs)
        self.best_f2 = -1.0
        self.best_weights = None

    def train_epoch(self, loader):
        self.model.train()
        for images, targets in loader:
            images, targets = images.to(self.device), targets.to(self.device)
            self.optimizer.zero_grad()
            loss = self.criterion(self.model(images), targets)
            loss.backward()
            self.optimizer.step()
        self.scheduler.step()

    @torch.no_grad()
    def f2_score(self, loader):
        self.model.eval()
        tp = fp = fn = 0.0
        for images, targets in loader:
            scores = self.model(images.to(self.device)).softmax(dim=1)
            predicted = (scores > self.cfg.threshold).float()
            targets = targets.to(self.device)
            tp += (predicted * targets).sum().item()
            fp += (predicted * (1 - targets)).sum().item()
            fn += ((1 - predicted) * targets).sum().item()
        precision, recall = tp / max(tp + fp, 1.0), tp / max(tp + fn, 1.0)
        return 5 * precision * recall / max(4 * precision + recall, 1e-8)

    def remember_if_best(self, epoch, f2):
        if f2 > self.best_f2:
            self.best_f2 = f2
            self.best_weights = {name: t for name, t in self.model.state_dict().items()}
            print(f"  new best F2 {f2:.4f} at epoch {epoch}")

    def fit(self, train_loader, valid_loader):
        for epoch in range(self.cfg.epochs):
            self.train_epoch(train_loader)
            self.remember_if_best(epoch, self.f2_score(valid_loader))
        self.model.load_state_dict(self.best_weights)
        torch.save(self.model.state_dict(), self.cfg.out)


def main(cfg: Config):
    random.seed(cfg.seed)
    torch.manual_seed(cfg.seed)
    normalize = T.Normalize(cfg.mean, cfg.std)
    train_tf = T.Compose([T.RandomResizedCrop(cfg.image_size, scale=(0.7, 1.0)), T.RandomHorizontalFlip(),
                          T.RandomVerticalFlip(), T.ToTensor(), normalize])
    eval_tf = T.Compose([T.Resize(cfg.image_size), T.ToTensor(), normalize])

    full = PlanetChips(cfg, train_tf)
    n_valid = int(len(full) * cfg.valid_fraction)
    train_part, valid_part = random_split(full, [len(full) - n_valid, n_valid],
                                          generator=torch.Generator().manual_seed(cfg.seed))
    valid_view = PlanetChips(cfg, eval_tf)
    valid_part = torch.utils.data.Subset(valid_view, valid_part.indices)

    train_loader = DataLoader(train_part, batch_size=cfg.batch_size, shuffle=True, num_workers=6, drop_last=True)
    valid_loader = DataLoader(valid_part, batch_size=cfg.batch_size, num_workers=6)

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    cfg.out.parent.mkdir(parents=True, exist_ok=True)
    TagTrainer(cfg, build_model(len(TAGS)), device).fit(train_loader, valid_loader)


if __name__ == "__main__":
    main(Config())
