"""Fine-tune an ImageNet backbone on PlantVillage leaf images (38 disease classes).

Usage:
    python q01_plant_leaf_finetune.py --data /data/plantvillage --arch efficientnet_b0 --epochs 8
"""
import argparse
import json
import os
import time

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader
from torchvision import datasets, models, transforms

IMAGENET_MEAN = (0.485, 0.456, 0.406)
IMAGENET_STD = (0.229, 0.224, 0.225)


def parse_args():
    p = argparse.ArgumentParser(description="PlantVillage transfer learning")
    p.add_argument("--data", default="/data/plantvillage")
    p.add_argument("--arch", default="efficientnet_b0", choices=["resnet50", "efficientnet_b0"])
    p.add_argument("--epochs", type=int, default=8)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--img-size", type=int, default=224)
    p.add_argument("--workers", type=int, default=4)
    p.add_argument("--head-names", nargs="+", default=["fc"],
                   help="parameters whose name contains one of these strings are trained")
    p.add_argument("--out", default="runs/plant_leaf")
    return p.parse_args()


def make_loaders(root, img_size, batch_size, workers):
    train_tf = transforms.Compose([
        transforms.RandomResizedCrop(img_size, scale=(0.6, 1.0)),
        transforms.RandomHorizontalFlip(),
        transforms.ColorJitter(0.2, 0.2, 0.2),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    eval_tf = transforms.Compose([
        transforms.Resize(int(img_size * 1.14)),
        transforms.CenterCrop(img_size),
        transforms.ToTensor(),
        transforms.Normalize(IMAGENET_MEAN, IMAGENET_STD),
    ])
    train_ds = datasets.ImageFolder(os.path.join(root, "train"), train_tf)
    val_ds = datasets.ImageFolder(os.path.join(root, "val"), eval_tf)
    train_dl = DataLoader(train_ds, batch_size=batch_size, shuffle=True, num_workers=workers,
                          pin_memory=True, drop_last=True)
    val_dl = DataLoader(val_ds, batch_size=batch_size, shuffle=False, num_workers=workers)
    return train_dl, val_dl, train_ds.classes


def build_model(arch, num_classes):
    if arch == "resnet50":
        model = models.resnet50(weights=models.ResNet50_Weights.IMAGENET1K_V2)
        model.fc = nn.Linear(model.fc.in_features, num_classes)
    else:
        model = models.efficientnet_b0(weights=models.EfficientNet_B0_Weights.IMAGENET1K_V1)
        model.classifier[1] = nn.Linear(model.classifier[1].in_features, num_classes)
    return model


def set_trainable(model, head_names):
    trainable = 0
    for name, param in model.named_parameters():
        param.requires_grad = any(key in name for key in head_names)
        trainable += param.numel() if param.requires_grad else 0
    return trainable


def freeze_norm_stats(model):
    """BatchNorm layers whose affine parameters are frozen keep their ImageNet statistics."""
    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d) and not any(p.requires_grad for p in m.parameters()):
            m.eval()


def train_one_epoch(model, loader, optimizer, device):
    model.train()
    freeze_norm_stats(model)
    total, seen = 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device, non_blocking=True), labels.to(device, non_blocking=True)
        optimizer.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(images), labels, label_smoothing=0.1)
        loss.backward()
        optimizer.step()
        total += loss.item() * labels.size(0)
        seen += labels.size(0)
    return total / seen


@torch.no_grad()
def evaluate(model, loader, device):
    model.eval()
    correct, loss_sum, n = 0, 0.0, 0
    for images, labels in loader:
        images, labels = images.to(device), labels.to(device)
        logits = model(images)
        loss_sum += F.cross_entropy(logits, labels, reduction="sum").item()
        correct += (logits.argmax(dim=1) == labels).sum().item()
        n += labels.size(0)
    return loss_sum / n, correct / n


def main():
    args = parse_args()
    torch.manual_seed(0)
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    os.makedirs(args.out, exist_ok=True)

    train_dl, val_dl, classes = make_loaders(args.data, args.img_size, args.batch_size, args.workers)
    model = build_model(args.arch, len(classes))
    n_train = set_trainable(model, args.head_names)
    model.to(device)
    print(f"{args.arch}: {n_train:,} trainable parameters")

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.SGD(params, lr=args.lr, momentum=0.9, nesterov=True)
    scheduler = torch.optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.epochs)

    best_acc, history = 0.0, []
    for epoch in range(args.epochs):
        t0 = time.time()
        train_loss = train_one_epoch(model, train_dl, optimizer, device)
        val_loss, val_acc = evaluate(model, val_dl, device)
        scheduler.step()
        history.append({"epoch": epoch, "train_loss": train_loss, "val_loss": val_loss, "val_acc": val_acc})
        print(f"epoch {epoch:02d} train {train_loss:.4f} val {val_loss:.4f} acc {val_acc:.4f} "
              f"({time.time() - t0:.0f}s)")
        if val_acc > best_acc:
            best_acc = val_acc
            torch.save({"model": model.state_dict(), "classes": classes, "arch": args.arch},
                       os.path.join(args.out, "best.pt"))

    with open(os.path.join(args.out, "history.json"), "w") as f:
        json.dump(history, f, indent=2)
    print(f"best val accuracy {best_acc:.4f}")


if __name__ == "__main__":
    main()
