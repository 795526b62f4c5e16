"""WikiArt style recognition (27 styles): two-stage fine-tuning of an ImageNet ResNet-50.

Stage 1 (first `freeze_epochs` epochs): the backbone is held fixed and only the new head learns.
Stage 2: everything is fine-tuned.
"""
import os
import time

import pandas as pd
import torch
import torch.nn as nn
import torch.nn.functional as F
from PIL import Image
from torch.utils.data import DataLoader, Dataset
from torchvision import models, transforms

CONFIG = {
    "root": "data/wikiart",
    "train_csv": "data/wikiart/style_train.csv",
    "val_csv": "data/wikiart/style_val.csv",
    "num_classes": 27,
    "img_size": 224,
    "batch_size": 64,
    "epochs": 12,
    "freeze_epochs": 3,
    "lr": 1e-2,
    "momentum": 0.9,
    "workers": 8,
}


class ArtDataset(Dataset):
    def __init__(self, csv_path, root, transform):
        df = pd.read_csv(csv_path, names=["path", "style"])
        self.paths = [os.path.join(root, p) for p in df["path"]]
        self.styles = df["style"].astype(int).tolist()
        self.transform = transform

    def __len__(self):
        return len(self.paths)

    def __getitem__(self, idx):
        return self.transform(Image.open(self.paths[idx]).convert("RGB")), self.styles[idx]


def make_loaders(cfg):
    norm = transforms.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225])
    train_tf = transforms.Compose([transforms.RandomResizedCrop(cfg["img_size"], scale=(0.5, 1.0)),
                                   transforms.RandomHorizontalFlip(), transforms.ToTensor(), norm])
    val_tf = transforms.Compose([transforms.Resize(256), transforms.CenterCrop(cfg["img_size"]),
                                 transforms.ToTensor(), norm])
    train = ArtDataset(cfg["train_csv"], cfg["root"], train_tf)
    val = ArtDataset(cfg["val_csv"], cfg["root"], val_tf)
    return (DataLoader(train, cfg["batch_size"], shuffle=True, num_workers=cfg["workers"], drop_last=True),
            DataLoader(val, cfg["batch_size"], shuffle=False, num_workers=cfg["workers"]))


class StyleNet(nn.Module):
    def __init__(self, num_classes):
        super().__init__()
        resnet = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        self.backbone = nn.Sequential(*list(resnet.children())[:-1])
        self.head = nn.Sequential(nn.Flatten(), nn.Dropout(0.2), nn.Linear(2048, num_classes))

    def forward(self, x):
        return self.head(self.backbone(x))


def freeze_backbone(model):
    model.backbone.eval()


def make_optimizer(model, cfg):
    return torch.optim.SGD(model.parameters(), lr=cfg["lr"], momentum=cfg["momentum"])


def train_one_epoch(model, loader, optimizer, epoch, cfg, device):
    model.train()
    if epoch < cfg["freeze_epochs"]:
        freeze_backbone(model)
    total, count = 0.0, 0
    for images, styles in loader:
        images, styles = images.to(device), styles.to(device)
        optimizer.zero_grad()
        loss = F.cross_entropy(model(images), styles)
        loss.backward()
        optimizer.step()
        total += loss.item() * styles.size(0)
        count += styles.size(0)
    return total / count


@torch.no_grad()
def validate(model, loader, device):
    model.eval()
    correct, count = 0, 0
    for images, styles in loader:
        preds = model(images.to(device)).argmax(dim=1)
        correct += (preds.cpu() == styles).sum().item()
        count += styles.size(0)
    return correct / count


def main(cfg=CONFIG):
    torch.manual_seed(42)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    train_dl, val_dl = make_loaders(cfg)
    model = StyleNet(cfg["num_classes"]).to(device)
    optimizer = make_optimizer(model, cfg)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=cfg["epochs"])
    best = 0.0
    for epoch in range(cfg["epochs"]):
        start = time.time()
        loss = train_one_epoch(model, train_dl, optimizer, epoch, cfg, device)
        acc = validate(model, val_dl, device)
        scheduler.step()
        stage = "head only" if epoch < cfg["freeze_epochs"] else "full"
        print(f"[{stage:9s}] epoch {epoch + 1:02d} loss {loss:.4f} val acc {acc:.4f} ({time.time() - start:.0f}s)")
        if acc > best:
            best = acc
            torch.save(model.state_dict(), "wikiart_style_r50.pt")
    print(f"best val accuracy {best:.4f}")


if __name__ == "__main__":
    main()
