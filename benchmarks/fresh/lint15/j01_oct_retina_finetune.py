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
from torchvision import models, transforms


@dataclass
class Config:
    root: str = "data/oct2017"
    out_dir: str = "runs/oct_resnet"
    classes: tuple = ("CNV", "DME", "DRUSEN", "NORMAL")
    short_side: int = 200
    crop: int = 224
    batch_size: int = 32
    epochs: int = 12
    warm_epochs: int = 3
    lr_head: float = 1e-3
    lr_body: float = 1e-4
    workers: int = 4
    seed: int = 7


def seed_all(seed):
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


class OctScans(Dataset):
    def __init__(self, root, split, classes, transform):
        self.items = []
        for label, name in enumerate(classes):
            for path in sorted(Path(root, split, name).glob("*.jpeg")):
                self.items.append((path, label))
        self.transform = transform

    def __len__(self):
        return len(self.items)

    def __getitem__(self, idx):
        path, label = self.items[idx]
        image = Image.open(path).convert("RGB")
        return self.transform(image), label


def build_transforms(cfg):
    mean, std = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]
    train = transforms.Compose([
        transforms.Resize(cfg.short_side),
        transforms.RandomCrop(cfg.crop),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(brightness=0.2, contrast=0.2),
        transforms.ToTensor(),
        transforms.Normalize(mean, std),
    ])
    test = transforms.Compose([
        transforms.Resize((cfg.crop, cfg.crop)),
        transforms.ToTensor(),
        transforms.Normalize(mean, std),
    ])
    return train, test


def build_model(num_classes):
    net = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
    net.fc = nn.Linear(net.fc.in_features, num_classes)
    return net


class StagedUnfreeze:
    def __init__(self, warm_epochs):
        self.warm_epochs = warm_epochs

    def on_train_begin(self, model):
        for name, p in model.named_parameters():
            if not name.startswith("fc."):
                p.require_grad = False

    def on_epoch_begin(self, model, epoch):
        if epoch == self.warm_epochs:
            for p in model.parameters():
                p.requires_grad_(True)


def param_groups(model, cfg):
    head = [p for n, p in model.named_parameters() if n.startswith("fc.")]
    body = [p for n, p in model.named_parameters() if not n.startswith("fc.")]
    return [{"params": head, "lr": cfg.lr_head}, {"params": body, "lr": cfg.lr_body}]


def evaluate(model, loader, device):
    model.eval()
    correct, total = 0, 0
    with torch.no_grad():
        for images, labels in loader:
            logits = model(images.to(device))
            correct += (logits.argmax(1).cpu() == labels).sum().item()
            total += labels.numel()
    return correct / max(total, 1)


def fit(model, train_loader, val_loader, cfg, device, callbacks):
    optimizer = torch.optim.Adam(param_groups(model, cfg))
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg.epochs)
    for cb in callbacks:
        cb.on_train_begin(model)
    best, history = 0.0, []
    for epoch in range(cfg.epochs):
        for cb in callbacks:
            cb.on_epoch_begin(model, epoch)
        model.train()
        running, seen = 0.0, 0
        for images, labels in train_loader:
            images, labels = images.to(device), labels.to(device)
            loss = F.cross_entropy(model(images), labels, label_smoothing=0.05)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            running += loss.item() * labels.size(0)
            seen += labels.size(0)
        scheduler.step()
        acc = evaluate(model, val_loader, device)
        history.append({"epoch": epoch, "loss": running / max(seen, 1), "val_acc": acc})
        print(history[-1])
        if acc > best:
            best = acc
            torch.save(model.state_dict(), Path(cfg.out_dir, "best.pt"))
    return history


def main():
    cfg = Config()
    seed_all(cfg.seed)
    Path(cfg.out_dir).mkdir(parents=True, exist_ok=True)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_tf, test_tf = build_transforms(cfg)
    train_set = OctScans(cfg.root, "train", cfg.classes, train_tf)
    val_set = OctScans(cfg.root, "val", cfg.classes, test_tf)
    train_loader = DataLoader(train_set, batch_size=cfg.batch_size, shuffle=True,
                              num_workers=cfg.workers, pin_memory=True, drop_last=True)
    val_loader = DataLoader(val_set, batch_size=cfg.batch_size, num_workers=cfg.workers)
    model = build_model(len(cfg.classes)).to(device)
    history = fit(model, train_loader, val_loader, cfg, device, [StagedUnfreeze(cfg.warm_epochs)])
    with open(Path(cfg.out_dir, "history.json"), "w") as fh:
        json.dump({"config": asdict(cfg), "history": history}, fh, indent=2)


if __name__ == "__main__":
    main()
